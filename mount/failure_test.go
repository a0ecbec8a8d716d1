package mount_test

import (
	"context"
	"errors"
	"maps"
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// failAfter lets the first n calls of one method on memory files through,
// then fails every later one with errInjected; the file count's calls
// (reserved keys) pass. With no method it fails nothing.
type failAfter struct {
	blob.Store
	method string // "Put" or "Delete"
	n      atomic.Int64
}

var errInjected = errors.New("injected failure")

func (f *failAfter) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if f.method == "Put" && !blob.IsReserved(key) && f.n.Add(-1) < 0 {
		return blob.Info{}, errInjected
	}
	return f.Store.Put(ctx, key, data, c)
}

func (f *failAfter) Delete(ctx context.Context, key string, c blob.Cond) error {
	if f.method == "Delete" && !blob.IsReserved(key) && f.n.Add(-1) < 0 {
		return errInjected
	}
	return f.Store.Delete(ctx, key, c)
}

// A rename across mounts that fails midway loses nothing: when a copy into
// the other mount fails, the copies made are removed and the sources stay;
// when a source cannot be deleted, it stays at both paths. Never neither.
func TestRenameAcrossFailures(t *testing.T) {
	files := map[string]string{"d/1.md": "one\n", "d/2.md": "two\n", "d/3.md": "three\n"}
	for _, tc := range []struct {
		name       string
		onA, onB   string // the failing method on mount a, on mount b ("" for none)
		leftInA    int    // how many sources stay in mount a
		wantB      map[string]string
		wantResult string
	}{
		{name: "the second copy fails", onB: "Put", leftInA: 3, wantB: map[string]string{},
			wantResult: "Error: The memory storage failed: the storage backend returned an error"},
		{name: "the second source delete fails", onA: "Delete", leftInA: 2, wantB: files,
			wantResult: "Error: The memory storage failed: the storage backend returned an error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rawA, rawB := mem.New(nil), mem.New(nil)
			for k, v := range files {
				put(t, rawA, k, v)
			}
			a, b := &failAfter{Store: coreOnly{rawA}, method: tc.onA}, &failAfter{Store: coreOnly{rawB}, method: tc.onB}
			a.n.Store(1) // the first call of the method passes, the rest fail
			b.n.Store(1)
			tab := newTable(t, mount.Mount{Name: "a", Store: a}, mount.Mount{Name: "b", Store: b})
			got := execute(t, tab, memory.Options{}, `{"command":"rename","old_path":"/memories/a/d","new_path":"/memories/b/d"}`)
			if got.Text != tc.wantResult || !errors.Is(got.Err, memory.ErrStorage) {
				t.Errorf("got %q (%v), want %q", got.Text, got.Err, tc.wantResult)
			}
			// The memory files: b's file count holds the reservation of
			// the files the rename was bringing in (too high, which is
			// safe, until a recount).
			gotA, gotB := contents(t, rawA), contents(t, rawB)
			maps.DeleteFunc(gotB, func(k, _ string) bool { return blob.IsReserved(k) })
			if len(gotA) != tc.leftInA || !maps.Equal(gotB, tc.wantB) {
				t.Errorf("mount a holds %q, b holds %q; want %d of the sources and %q", gotA, gotB, tc.leftInA, tc.wantB)
			}
			for k, v := range gotA {
				if files[k] != v {
					t.Errorf("mount a's %s holds %q, want %q", k, v, files[k])
				}
			}
			for k := range files {
				if _, inA := gotA[k]; !inA {
					if _, inB := gotB[k]; !inB {
						t.Errorf("%s is in neither mount", k)
					}
				}
			}
		})
	}
}
