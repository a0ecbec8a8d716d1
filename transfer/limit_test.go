package transfer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// getLimits is a store that records the largest Get limit asked for.
type getLimits struct {
	blob.Store
	most atomic.Int64
}

func (g *getLimits) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	for m := g.most.Load(); limit > m && !g.most.CompareAndSwap(m, limit); m = g.most.Load() {
	}
	return g.Store.Get(ctx, key, limit)
}

// memWriter is a FileWriter that keeps what it is given.
type memWriter struct {
	files  map[string]string
	closed bool
}

func (w *memWriter) WriteFile(name string, data []byte, _ time.Time) error {
	w.files[name] = string(data)
	return nil
}

func (w *memWriter) Close() error { w.closed = true; return nil }

// TestTransferReadLimit (issue 26, item 1): Export, Copy and Verify read no
// object over the read limit (memory.ReadLimit, here 5 MiB): one planted
// over it is reported as a Problem of kind ErrTooLarge, with the whole
// text, and skipped; every other file is moved.
func TestTransferReadLimit(t *testing.T) {
	ctx := context.Background()
	limit := memory.ReadLimit(mem.New(nil))
	if limit != memory.DefaultMaxImageBytes {
		t.Fatalf("ReadLimit of a plain store = %d, want DefaultMaxImageBytes", limit)
	}
	big := strings.Repeat("x", int(limit)+1)
	src := &getLimits{Store: storeWith(t, map[string]string{"a.md": "a", "big.bin": big, "z/b.md": "b"})}
	want := "big.bin: is 5242881 bytes, over the limit of 5242880 bytes that a memory command reads; not moved"
	check := func(what string, err error) {
		t.Helper()
		pe, ok := errors.AsType[*ProblemsError](err)
		if !ok || len(pe.Problems) != 1 || pe.Problems[0].String() != want || !errors.Is(pe.Problems[0].Kind, ErrTooLarge) {
			t.Errorf("%s: %v; want one problem %q of kind ErrTooLarge", what, err, want)
		}
	}

	w := &memWriter{files: map[string]string{}}
	stats, err := Export(ctx, src, w)
	check("Export", err)
	if !w.closed || stats.Files != 2 || !mapsEqual(w.files, map[string]string{"a.md": "a", "z/b.md": "b"}) {
		t.Errorf("Export wrote %v (closed %v, stats %+v); want a.md and z/b.md", w.files, w.closed, stats)
	}

	dst := mem.New(nil)
	cstats, err := Copy(ctx, src, dst, nil)
	check("Copy", err)
	if cstats.Copied != 2 || !mapsEqual(contents(t, dst), map[string]string{"a.md": "a", "z/b.md": "b"}) {
		t.Errorf("Copy: %+v, destination %v; want a.md and z/b.md copied", cstats, contents(t, dst))
	}
	_, err = Verify(ctx, src, dst, nil)
	check("Verify", err)
	if m := src.most.Load(); m > limit {
		t.Errorf("a Get asked for up to %d bytes; the read limit is %d", m, limit)
	}
}

// TestImportReadLimit: ReadTar and ReadDir do not read a file over their
// limit, and Import skips it with a Problem of kind ErrTooLarge after
// importing the rest.
func TestImportReadLimit(t *testing.T) {
	ctx := context.Background()
	var tarball bytes.Buffer
	tw := NewTarWriter(&tarball)
	dir := t.TempDir()
	dw, err := NewDirWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []FileWriter{tw, dw} {
		for name, data := range map[string]string{"a.md": "a", "big.bin": "0123456789"} {
			if err := w.WriteFile(name, []byte(data), time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	fromTar, err := ReadTar(&tarball, 5, "")
	if err != nil {
		t.Fatal(err)
	}
	fromDir, err := ReadDir(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	for what, files := range map[string][]File{"tar": fromTar, "dir": fromDir} {
		s := mem.New(nil)
		stats, err := Import(ctx, s, files, nil)
		want := "big.bin: is 10 bytes, over the limit of 5 bytes that a memory command reads; not moved"
		pe, ok := errors.AsType[*ProblemsError](err)
		if !ok || len(pe.Problems) != 1 || pe.Problems[0].String() != want || !errors.Is(pe.Problems[0].Kind, ErrTooLarge) {
			t.Errorf("%s: Import = %v; want one problem %q", what, err, want)
		}
		if stats.Written != 1 || !mapsEqual(contents(t, s), map[string]string{"a.md": "a"}) {
			t.Errorf("%s: imported %+v, the store holds %v; want a.md alone", what, stats, contents(t, s))
		}
	}
}

// ReadDir and a spooling ReadTar hold no content: Import reads each file
// when it compares or writes it. A file that grows past the limit after it
// was listed is skipped as too large, whether the plan compares it with
// the store's or the write reads it, and the rest is imported.
func TestImportLoadsLazily(t *testing.T) {
	ctx := t.Context()
	var tarball bytes.Buffer
	tw := NewTarWriter(&tarball)
	dir := t.TempDir()
	dw, err := NewDirWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []FileWriter{tw, dw} {
		for name, data := range map[string]string{"a.md": "a", "same.md": "same", "grows.md": "g"} {
			if err := w.WriteFile(name, []byte(data), time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	spool := t.TempDir()
	fromTar, err := ReadTar(&tarball, 5, spool)
	if err != nil {
		t.Fatal(err)
	}
	fromDir, err := ReadDir(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]struct {
		files []File
		grows string // where grows.md's content lies
	}{"tar": {fromTar, ""}, "dir": {fromDir, filepath.Join(dir, "grows.md")}} {
		for _, f := range c.files {
			if f.Data != nil || f.Load == nil {
				t.Fatalf("%s: %s is held in memory (%q) or has no Load", what, f.Name, f.Data)
			}
		}
		grows := c.grows
		if grows == "" { // the spooled copy of grows.md
			for i, f := range c.files {
				if f.Name == "grows.md" {
					grows = filepath.Join(spool, strconv.Itoa(i))
				}
			}
			if info, err := os.Stat(grows); err != nil || info.Mode().Perm() != 0o600 {
				t.Fatalf("tar: the spooled file %s: %v, %v", grows, info, err)
			}
		}
		s := storeWith(t, map[string]string{"same.md": "same", "grows.md": "g"})
		if err := os.WriteFile(grows, []byte("grown past five bytes"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Import(ctx, s, c.files, &ImportOptions{Overwrite: true})
		want := "grows.md: is over the limit of 5 bytes that a memory command reads; not moved"
		pe, ok := errors.AsType[*ProblemsError](err)
		if !ok || len(pe.Problems) != 1 || pe.Problems[0].String() != want {
			t.Errorf("%s: Import = %v; want one problem %q", what, err, want)
		}
		if !mapsEqual(contents(t, s), map[string]string{"same.md": "same", "grows.md": "g"}) {
			t.Errorf("%s: a refused plan wrote: %v", what, contents(t, s))
		}
		// Grown between the plan and the write: the write stops with the cause.
		if err := os.WriteFile(grows, []byte("g"), 0o600); err != nil {
			t.Fatal(err)
		}
		s2 := mem.New(nil)
		files := slices.Clone(c.files)
		for i, f := range files {
			if f.Name == "grows.md" {
				load := f.Load
				files[i].Load = func() ([]byte, error) {
					if err := os.WriteFile(grows, []byte("grown past five bytes"), 0o600); err != nil {
						return nil, err
					}
					return load()
				}
			}
		}
		stats, err := Import(ctx, s2, files, nil)
		pe, ok = errors.AsType[*ProblemsError](err)
		if !ok || len(pe.Problems) != 1 || pe.Problems[0].String() != want || stats.Written != 2 || stats.New != 2 {
			t.Errorf("%s: Import with a file grown before its write = %+v, %v; want 2 written and one problem %q", what, stats, err, want)
		}
		if !mapsEqual(contents(t, s2), map[string]string{"a.md": "a", "same.md": "same"}) {
			t.Errorf("%s: after a file grew before its write, the store holds %v", what, contents(t, s2))
		}
		if err := os.WriteFile(grows, []byte("g"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
