package blob_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

// TestDryRunSuite: over an empty store, a dry-run store behaves as a store
// (its writes are seen by its own reads).
func TestDryRunSuite(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.DryRun(mem.New(nil)) })
}

// TestDryRunChangesNothing: writes through a dry-run store are checked
// against the store beneath (its keys and versions) and seen through the
// dry run, listings included, and the store beneath is unchanged.
func TestDryRunChangesNothing(t *testing.T) {
	ctx := t.Context()
	inner := mem.New(nil)
	put := func(key, data string) blob.Info {
		info, err := inner.Put(ctx, key, []byte(data), blob.Cond{})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	a := put("a", "a")
	put("c", "c")
	d := blob.DryRun(inner)
	if _, err := d.Put(ctx, "a", []byte("x"), blob.Cond{IfAbsent: true}); !errors.Is(err, blob.ErrPrecondition) {
		t.Errorf("IfAbsent over the inner key: %v, want ErrPrecondition", err)
	}
	if _, err := d.Put(ctx, "a", []byte("x"), blob.Cond{IfVersion: "other"}); !errors.Is(err, blob.ErrPrecondition) {
		t.Errorf("IfVersion of another version: %v, want ErrPrecondition", err)
	}
	if _, err := d.Put(ctx, "a", []byte("new a"), blob.Cond{IfVersion: a.Version}); err != nil {
		t.Fatalf("IfVersion of the inner version: %v", err)
	}
	if _, err := d.Put(ctx, "b", []byte("b"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "c", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "c", blob.Cond{}); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("a second delete: %v, want ErrNotExist", err)
	}
	if err := d.Delete(ctx, "zz", blob.Cond{}); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("a delete of nothing: %v, want ErrNotExist", err)
	}
	if got, want := dryTree(t, d), map[string]string{"a": "new a", "b": "b"}; !maps.Equal(got, want) {
		t.Errorf("through the dry run: %v, want %v", got, want)
	}
	if got, want := dryTree(t, inner), map[string]string{"a": "a", "c": "c"}; !maps.Equal(got, want) {
		t.Errorf("the store beneath: %v, want %v", got, want)
	}
	ro := blob.DryRun(blob.ReadOnly(inner))
	if _, err := ro.Put(ctx, "n", nil, blob.Cond{}); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("a dry run over a read-only store: %v, want ErrReadOnly", err)
	}
}

// dryTree returns every key of s and its content.
func dryTree(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for info, err := range s.List(t.Context(), "") {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := s.Get(t.Context(), info.Key, 100)
		if err != nil {
			t.Fatal(err)
		}
		out[info.Key] = string(data)
	}
	return out
}

// exclusive is a store that says it keeps a name from being both a file
// and a directory.
type exclusive struct{ blob.Store }

func (exclusive) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen, ExclusiveNames: true}
}

// A dry run keeps its writes to itself, where nothing refuses a file and
// a directory of one name: it does not pass ExclusiveNames on.
func TestDryRunNamesNotExclusive(t *testing.T) {
	if !blob.TraitsOf(exclusive{mem.New(nil)}).ExclusiveNames {
		t.Fatal("the inner store does not say ExclusiveNames")
	}
	if blob.TraitsOf(blob.DryRun(exclusive{mem.New(nil)})).ExclusiveNames {
		t.Error("a dry run says ExclusiveNames")
	}
}
