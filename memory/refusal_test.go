package memory_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
)

// Refusal tells a writer of many files which gate errors refuse one file by
// the tree's rules, with the memory tool's text; every other error is not
// one, so that a storage failure still stops a copy or an import.
func TestRefusal(t *testing.T) {
	ctx := t.Context()
	h := newHandler(t, mem.New(nil), memory.Options{MaxFiles: 2, MaxFileBytes: 8})
	for _, path := range []string{"/memories/a", "/memories/b"} {
		if _, err := h.Write(ctx, path, []byte("x"), ""); err != nil {
			t.Fatal(err)
		}
	}
	roomy := newHandler(t, mem.New(nil), memory.Options{MaxFileBytes: 8})
	if _, err := roomy.Write(ctx, "/memories/a", []byte("x"), ""); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		err      error
		want     string
		wantKind error
	}{
		{"too large", write(t, roomy, "/memories/c", "0123456789"), "File /memories/c would be 10 bytes, over the limit of 8 bytes per memory file", memory.ErrTooLarge},
		{"full", write(t, h, "/memories/c", "x"), "The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first.", memory.ErrFull},
		{"ancestor is a file", write(t, roomy, "/memories/a/b", "x"), "The path /memories/a is a file, not a directory", memory.ErrNotDir},
	} {
		if !errors.Is(c.err, c.wantKind) {
			t.Fatalf("%s: the gate answered %v, not the kind the case is about", c.name, c.err)
		}
		got, ok := memory.Refusal(fmt.Errorf("writing: %w", c.err))
		if !ok || got != c.want {
			t.Errorf("%s: Refusal = %q, %v; want %q, true", c.name, got, ok, c.want)
		}
	}
	for _, err := range []error{
		nil,
		errors.New("connection reset"),
		&memory.Error{Kind: memory.ErrStorage, Msg: "The memory storage failed: the request timed out"},
		&memory.Error{Kind: memory.ErrConflict, Msg: "changed by another writer"},
	} {
		if got, ok := memory.Refusal(err); ok || got != "" {
			t.Errorf("Refusal(%v) = %q, %v; want \"\", false", err, got, ok)
		}
	}
}

func write(t *testing.T, h *memory.Handler, path, text string) error {
	t.Helper()
	_, err := h.Write(t.Context(), path, []byte(text), "")
	if err == nil {
		t.Fatalf("write %s: the gate took it", path)
	}
	return err
}
