package memory_test

import (
	"log/slog"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// limitStep is one command and the whole text it must answer.
type limitStep struct{ in, want string }

// runSteps runs steps in order on h and compares each whole text.
func runSteps(t *testing.T, h *memory.Handler, steps []limitStep) {
	t.Helper()
	for _, s := range steps {
		if got := h.Execute(t.Context(), []byte(s.in)); got.Text != s.want {
			t.Errorf("%s\n got %q\nwant %q", s.in, got.Text, s.want)
		}
	}
}

func limitedHandler(t *testing.T, s blob.Store, opts memory.Options) *memory.Handler {
	t.Helper()
	opts.Logger = slog.New(slog.DiscardHandler)
	h, err := memory.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestStoreLimits: the limits a store carries (blob.WithLimits, which a
// URL's max_files, max_file_bytes and view_limit set) hold like Options,
// and Options a program sets win over them.
func TestStoreLimits(t *testing.T) {
	limited := func() blob.Store {
		return blob.WithLimits(mem.New(nil), blob.Limits{MaxFiles: 2, MaxFileBytes: 8, ViewLimit: 20})
	}
	const full = "Error: The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first."
	t.Run("from the store", func(t *testing.T) {
		runSteps(t, limitedHandler(t, limited(), memory.Options{}), []limitStep{
			{`{"command":"create","path":"/memories/a.md","file_text":"1234567\n"}`, "File created successfully at: /memories/a.md"},
			{`{"command":"create","path":"/memories/b.md","file_text":"123456789"}`,
				"Error: File /memories/b.md would be 9 bytes, over the limit of 8 bytes per memory file"},
			{`{"command":"create","path":"/memories/b.md","file_text":"b"}`, "File created successfully at: /memories/b.md"},
			{`{"command":"create","path":"/memories/c.md","file_text":"c"}`, full},
			{`{"command":"view","path":"/memories/a.md"}`,
				"Here's the content of /memories/a.md with line numbers:\n     1\t1234567\n[Output truncated: showing lines 1-1 of 2. Use view_range to see more.]"},
		})
	})
	t.Run("options win", func(t *testing.T) {
		runSteps(t, limitedHandler(t, limited(), memory.Options{MaxFiles: 3, MaxFileBytes: 9}), []limitStep{
			{`{"command":"create","path":"/memories/a.md","file_text":"123456789"}`, "File created successfully at: /memories/a.md"},
			{`{"command":"create","path":"/memories/b.md","file_text":"b"}`, "File created successfully at: /memories/b.md"},
			{`{"command":"create","path":"/memories/c.md","file_text":"c"}`, "File created successfully at: /memories/c.md"},
			{`{"command":"create","path":"/memories/d.md","file_text":"d"}`,
				"Error: The memory directory is full: it holds 3 files, the limit is 3. Delete or merge files first."},
		})
	})
	t.Run("off", func(t *testing.T) {
		s := blob.WithLimits(mem.New(nil), blob.Limits{MaxFiles: -1})
		h := limitedHandler(t, s, memory.Options{})
		for _, name := range []string{"a", "b", "c"} {
			runSteps(t, h, []limitStep{{`{"command":"create","path":"/memories/` + name + `","file_text":""}`,
				"File created successfully at: /memories/" + name}})
		}
		if _, err := s.Stat(t.Context(), memory.FileCountKey); err == nil {
			t.Error("a store without a file limit got a file count")
		}
	})
}

// TestMountLimits: on a mount table, each mount's max_files and
// max_file_bytes hold within it; a mount that sets none has the defaults,
// and Options set in code hold in every mount.
func TestMountLimits(t *testing.T) {
	table := func() blob.Store {
		small := blob.WithLimits(mem.New(nil), blob.Limits{MaxFiles: 1, MaxFileBytes: 3})
		s, err := mount.New([]mount.Mount{{Name: "small", Store: small}, {Name: "big", Store: mem.New(nil)}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	runSteps(t, limitedHandler(t, table(), memory.Options{}), []limitStep{
		{`{"command":"create","path":"/memories/small/a","file_text":"abcd"}`,
			"Error: File /memories/small/a would be 4 bytes, over the limit of 3 bytes per memory file"},
		{`{"command":"create","path":"/memories/small/a","file_text":"abc"}`, "File created successfully at: /memories/small/a"},
		{`{"command":"str_replace","path":"/memories/small/a","old_str":"c","new_str":"cd"}`,
			"Error: File /memories/small/a would be 4 bytes, over the limit of 3 bytes per memory file"},
		{`{"command":"create","path":"/memories/small/b","file_text":""}`,
			"Error: The memory directory is full: it holds 1 files, the limit is 1. Delete or merge files first."},
		{`{"command":"create","path":"/memories/big/a","file_text":"abcd"}`, "File created successfully at: /memories/big/a"},
		{`{"command":"create","path":"/memories/big/b","file_text":"abcd"}`, "File created successfully at: /memories/big/b"},
	})
	runSteps(t, limitedHandler(t, table(), memory.Options{MaxFiles: 2, MaxFileBytes: 5}), []limitStep{
		{`{"command":"create","path":"/memories/small/a","file_text":"abcd"}`, "File created successfully at: /memories/small/a"},
		{`{"command":"create","path":"/memories/small/b","file_text":""}`, "File created successfully at: /memories/small/b"},
		{`{"command":"create","path":"/memories/big/a","file_text":"abcdef"}`,
			"Error: File /memories/big/a would be 6 bytes, over the limit of 5 bytes per memory file"},
	})
}
