package transfer

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// TestTransfersKeepTheDestinationRules checks that Copy and Import write
// through the write gate: the destination's file limit and file size limit
// hold, what they refuse is a Problem of kind ErrRefused with the memory
// tool's own text, and the file count stays exact, so that the next create
// of a memory.Handler is refused at the limit (before the gate, a copy or
// an import could take a store past its limit).
func TestTransfersKeepTheDestinationRules(t *testing.T) {
	ctx := context.Background()
	src := storeWith(t, map[string]string{"a.md": "a", "b.md": "b", "c.md": "c", "d/big.md": "0123456789"})
	limits := blob.Limits{MaxFiles: 3, MaxFileBytes: 5}
	wantProblems := func(full string) []Problem {
		return []Problem{
			{Key: full, Kind: ErrRefused,
				Reason: "The memory directory is full: it holds 3 files, the limit is 3. Delete or merge files first."},
			{Key: "d/big.md", Kind: ErrRefused,
				Reason: "File /memories/d/big.md would be 10 bytes, over the limit of 5 bytes per memory file"},
		}
	}
	check := func(t *testing.T, dst blob.Store, err error, full string) {
		t.Helper()
		pe, ok := errors.AsType[*ProblemsError](err)
		if !ok || fmt.Sprint(pe.Problems) != fmt.Sprint(wantProblems(full)) {
			t.Fatalf("err = %v; want the problems %v", err, wantProblems(full))
		}
		if got := contents(t, dst); !maps.Equal(got, map[string]string{"z.md": "z", "a.md": "a", "b.md": "b"}) {
			t.Fatalf("the destination holds %v; want z.md, a.md and b.md", got)
		}
		h, err := memory.New(dst, memory.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		res := h.Create(ctx, "/memories/e.md", "e")
		if want := "Error: The memory directory is full: it holds 3 files, the limit is 3. Delete or merge files first."; res.Text != want {
			t.Errorf("a create after the transfer: %q; want %q", res.Text, want)
		}
	}

	t.Run("copy", func(t *testing.T) {
		// One job, so that the files are written in key order and c.md is
		// the one the limit refuses.
		dst := blob.WithLimits(storeWith(t, map[string]string{"z.md": "z"}), limits)
		stats, err := Copy(ctx, src, dst, &CopyOptions{Jobs: 1})
		if want := (CopyStats{Total: 4, Copied: 2}); stats != want {
			t.Errorf("stats = %+v; want %+v", stats, want)
		}
		// z.md was written past the gate, before it: the gate counts it
		// with its first listing.
		check(t, dst, err, "c.md")
	})
	t.Run("import", func(t *testing.T) {
		dst := blob.WithLimits(storeWith(t, map[string]string{"z.md": "z"}), limits)
		var files []File
		for _, k := range []string{"a.md", "b.md", "c.md", "d/big.md"} {
			data, _, err := src.Get(ctx, k, 100)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, File{Name: k, Data: data})
		}
		stats, err := Import(ctx, dst, files, &ImportOptions{Jobs: 1})
		if want := (ImportStats{New: 2, Written: 2}); stats != want { // the two refused are problems
			t.Errorf("stats = %+v; want %+v", stats, want)
		}
		check(t, dst, err, "c.md")
	})
}

// TestStoreErrorNamesTheSide checks that a failure that stops Copy names
// the store it came from as a *StoreError (the CLI words it SRC or DST
// without reading the text), keeping the cause reachable.
func TestStoreErrorNamesTheSide(t *testing.T) {
	ctx := context.Background()
	src := storeWith(t, map[string]string{"a.md": "a"})
	_, err := Copy(ctx, src, blob.ReadOnly(storeWith(t, nil)), nil)
	se, ok := errors.AsType[*StoreError](err)
	if !ok || se.Side != Destination || !errors.Is(err, memory.ErrReadOnly) ||
		err.Error() != "destination: writing a.md: The memory directory is read-only: write is not allowed" {
		t.Errorf("Copy to a read-only store: %v (%#v)", err, se)
	}
	_, err = Verify(ctx, src, failingList{storeWith(t, nil)}, nil)
	if se, ok := errors.AsType[*StoreError](err); !ok || se.Side != Destination || !errors.Is(err, errListing) {
		t.Errorf("Verify with a failing destination: %v", err)
	}
}

var errListing = errors.New("the listing failed")

// failingList is a store whose List fails.
type failingList struct{ blob.Store }

func (f failingList) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, errListing) }
}
