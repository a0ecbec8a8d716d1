package crypt

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// batching is a store with blob.BatchDeleter that records the keys of
// each call, unconditional and versioned apart, as an S3 store would serve
// them in a few requests.
type batching struct {
	blob.Store
	batches, versions [][]string
}

func (b *batching) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	var keys []string
	versioned := false
	errs := make([]error, len(infos))
	for i, info := range infos {
		keys = append(keys, info.Key)
		versioned = versioned || info.Version != ""
		errs[i] = b.Store.Delete(ctx, info.Key, blob.Cond{IfVersion: info.Version})
		if info.Version == "" && errors.Is(errs[i], blob.ErrNotExist) {
			errs[i] = nil
		}
	}
	if versioned {
		b.versions = append(b.versions, keys)
	} else {
		b.batches = append(b.batches, keys)
	}
	return errs, nil
}

// TestBatchDeletes checks that the wrapper hands batch and versioned deletes
// to the inner store's capabilities (a directory delete or move on S3 stays
// a few requests when encrypted), at the versions it reported, and that
// neither can delete the integrity key object.
func TestBatchDeletes(t *testing.T) {
	ctx := t.Context()
	app := newX25519Key(t)
	inner := &batching{Store: mem.New(nil)}
	s := wrap(t, inner, config([]testKey{app}, app))
	put(t, s, "d/a", []byte("A"))
	b := put(t, s, "d/b", []byte("B"))
	stale := put(t, s, "d/c", []byte("C"))
	put(t, s, "d/c", []byte("C, rewritten"))

	if err := blob.DeleteKeys(ctx, s, []string{"d/a"}); err != nil {
		t.Fatalf("DeleteKeys: %v", err)
	}
	errs, err := blob.DeleteBatch(ctx, s, []blob.Info{b, stale})
	if err != nil || len(errs) != 2 || errs[0] != nil || !errors.Is(errs[1], blob.ErrPrecondition) {
		t.Fatalf("DeleteBatch = %v, %v; want [nil, ErrPrecondition], nil", errs, err)
	}
	if want := [][]string{{"d/a"}}; !slicesEqual(inner.batches, want) {
		t.Errorf("inner DeleteBatch calls without versions %q, want %q", inner.batches, want)
	}
	if want := [][]string{{"d/b", "d/c"}}; !slicesEqual(inner.versions, want) {
		t.Errorf("inner versioned DeleteBatch calls %q, want %q", inner.versions, want)
	}
	wantListed(t, s, "", "d/c")
	if got := get(t, s, "d/c"); string(got) != "C, rewritten" {
		t.Errorf("Get(d/c) = %q", got)
	}

	// The integrity key object is refused before the inner store is asked.
	if err := blob.DeleteKeys(ctx, s, []string{"d/c", keyObject}); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("DeleteKeys of the key object: %v, want ErrInvalidKey", err)
	}
	if _, err := blob.DeleteBatch(ctx, s, []blob.Info{{Key: keyObject, Version: "v"}}); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("DeleteBatch of the key object: %v, want ErrInvalidKey", err)
	}
	if len(inner.batches) != 1 || len(inner.versions) != 1 {
		t.Errorf("the inner store was called for the key object: %q, %q", inner.batches, inner.versions)
	}
	if _, err := inner.Stat(ctx, keyObject); err != nil {
		t.Errorf("Stat of the key object: %v", err)
	}
	wantListed(t, s, "", "d/c")
}

func slicesEqual(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
