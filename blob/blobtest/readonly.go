package blobtest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// seed is the data RunReadOnly asks its stores to hold.
var seed = map[string][]byte{
	"a":          []byte("object a"),
	"dir/b":      []byte("object b\x00\xff"),
	"dir/c/d":    {},
	"odd key+%#": []byte("odd"),
}

// RunReadOnly runs the suite for stores that refuse writes, such as
// blob.ReadOnly over a writable store. newStore is called once per subtest
// and returns a store holding exactly the given objects (and nothing else)
// for which blob.IsReadOnly is true. It checks reads of that data, and that
// every write (Put with each Cond, Delete, Rename, DeleteTree) fails with an
// error wrapping blob.ErrReadOnly and changes nothing.
func RunReadOnly(t *testing.T, newStore func(t *testing.T, objects map[string][]byte) blob.Store) {
	t.Helper()
	open := func(t *testing.T) blob.Store {
		s := newStore(t, maps.Clone(seed))
		if !blob.IsReadOnly(s) {
			t.Fatal("blob.IsReadOnly is false for the store: run it with blobtest.Run")
		}
		return s
	}
	t.Run("Reads", func(t *testing.T) {
		s := open(t)
		want := slices.Sorted(maps.Keys(seed))
		wantKeys(t, s, "", want...)
		wantKeys(t, s, "dir/", "dir/b", "dir/c/d")
		for k, data := range seed {
			info := wantContent(t, s, k, data)
			st, err := s.Stat(t.Context(), k)
			if err != nil || st.Version != info.Version || st.Size != int64(len(data)) {
				t.Fatalf("Stat(%q) = %+v, %v; want Size %d, Version %q", k, st, err, len(data), info.Version)
			}
		}
		wantAbsent(t, s, "missing")
		for k, data := range seed {
			if n := int64(len(data)); n > 0 {
				wantTooLarge(t, s, k, n, n-1)
			}
		}
		_, _, err := s.Get(t.Context(), "a//b", blob.MaxObjectBytes)
		wantErr(t, `Get("a//b")`, err, blob.ErrInvalidKey)
		_, _, err = s.Get(cancelled(t), "a", blob.MaxObjectBytes)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Get with a cancelled context: error = %v, want context.Canceled", err)
		}
	})
	t.Run("WritesRefused", func(t *testing.T) {
		s := open(t)
		before := takeSnapshot(t, s)
		ctx := t.Context()
		v := before["a"].version
		writes := []struct {
			name string
			err  error
		}{
			{"Put existing", second(s.Put(ctx, "a", []byte("x"), blob.Cond{}))},
			{"Put new", second(s.Put(ctx, "new", []byte("x"), blob.Cond{}))},
			{"Put(IfAbsent)", second(s.Put(ctx, "new", []byte("x"), blob.Cond{IfAbsent: true}))},
			{"Put(IfVersion)", second(s.Put(ctx, "a", []byte("x"), blob.Cond{IfVersion: v}))},
			{"Delete", s.Delete(ctx, "a", blob.Cond{})},
			{"Delete(IfVersion)", s.Delete(ctx, "a", blob.Cond{IfVersion: v})},
			{"Rename file", blob.Rename(ctx, s, "a", "moved")},
			{"Rename tree", blob.Rename(ctx, s, "dir", "moved")},
			{"DeleteTree", blob.DeleteTree(ctx, s, "dir")},
		}
		for _, w := range writes {
			if !errors.Is(w.err, blob.ErrReadOnly) {
				t.Errorf("%s: error = %v, want one wrapping ErrReadOnly", w.name, w.err)
			}
		}
		wantUnchanged(t, s, before, "refused writes")
	})
}

func second[T any](_ T, err error) error { return err }
