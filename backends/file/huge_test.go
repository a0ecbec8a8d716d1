//go:build unix

package file_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// TestHugeFile plants an 8 GiB sparse file (as `truncate -s 8G` would) in a
// store's directory: Get refuses it from its size without reading it, and
// the memory handler's view answers at once with the size and the limit,
// allocating a small fraction of the file.
func TestHugeFile(t *testing.T) {
	const size = 8 << 30
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.md"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(dir, "big.md"), size); err != nil {
		t.Skipf("this file system cannot hold an 8 GiB sparse file: %v", err)
	}
	s := open(t, dir)

	_, _, err := s.Get(t.Context(), "big.md", 1<<20)
	tl, ok := errors.AsType[*blob.TooLargeError](err)
	if !ok || *tl != (blob.TooLargeError{Key: "big.md", Size: size, Limit: 1 << 20}) {
		t.Fatalf("Get = %v; want a TooLargeError of size %d and limit %d", err, size, 1<<20)
	}

	h, err := memory.New(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	res := h.Execute(t.Context(), []byte(`{"command":"view","path":"/memories/big.md"}`))
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	want := "Error: File /memories/big.md is 8589934592 bytes, over the limit of 5242880 bytes that a memory command reads"
	if !res.IsError || res.Text != want {
		t.Fatalf("view = %q (error %v), want %q", res.Text, res.IsError, want)
	}
	if elapsed > 2*time.Second {
		t.Errorf("view took %v, want well under 2s", elapsed)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("view allocated %d bytes, want under 16 MiB for an 8 GiB file", alloc)
	}
}
