//go:build unix

package file_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestOpenRemovesStaleTmp: the temporary files crashed writes left in the
// root are removed when the store is opened once they are over an hour old;
// a fresh one (a write that may be in flight in another process) and a
// directory of that name stay.
func TestOpenRemovesStaleTmp(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	for _, name := range []string{".cloudmem-tmp-crashed", ".cloudmem-tmp-fresh", "note.md"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".cloudmem-tmp-dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".cloudmem-tmp-crashed", ".cloudmem-tmp-dir", "note.md"} {
		if err := os.Chtimes(filepath.Join(dir, name), old, old); err != nil {
			t.Fatal(err)
		}
	}
	open(t, dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".cloudmem-lock", ".cloudmem-tmp-dir", ".cloudmem-tmp-fresh", "note.md"}
	if !slices.Equal(names, want) {
		t.Fatalf("after Open the root holds %q, want %q", names, want)
	}
}
