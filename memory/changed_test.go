package memory_test

import (
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
)

// Result.Changed names what a successful writing command changed, in the
// normalised form, so that a front end (the MCP server's resource
// notifications) need not decode the command a second time.
func TestResultChanged(t *testing.T) {
	h := newHandler(t, mem.New(nil), memory.Options{})
	for _, c := range []struct {
		input string
		want  []string
	}{
		{`{"command":"create","path":"/memories/notes/a.md","file_text":"one\n"}`, []string{"/memories/notes/a.md"}},
		{`{"command":"create","path":"/memories/notes/a.md","file_text":"again\n"}`, nil}, // refused: it exists
		{`{"command":"view","path":"/memories/notes/a.md"}`, nil},
		{`{"command":"str_replace","path":"/memories/notes//a.md","old_str":"one","new_str":"two"}`, []string{"/memories/notes/a.md"}},
		{`{"command":"insert","path":"/memories/notes/a.md/","insert_line":0,"insert_text":"zero"}`, []string{"/memories/notes/a.md"}},
		{`{"command":"rename","old_path":"/memories/notes","new_path":"/memories/kept"}`, []string{"/memories/notes", "/memories/kept"}},
		{`{"command":"delete","path":"/memories/kept/a.md"}`, []string{"/memories/kept/a.md"}},
		{`{"command":"delete","path":"/memories/kept/a.md"}`, nil}, // refused: it is gone
		{`{"command":"nonsense"}`, nil},
	} {
		res := h.Execute(t.Context(), []byte(c.input))
		if got := res.Changed(); !slices.Equal(got, c.want) {
			t.Errorf("%s: Changed() = %q, want %q (result %q)", c.input, got, c.want, res.Text)
		}
	}
	if got := (memory.Result{Text: "made by hand"}).Changed(); got != nil {
		t.Errorf("a Result the Handler did not make: Changed() = %q, want nil", got)
	}
}
