package blob_test

import (
	"errors"
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
	tree := func(s blob.Store) map[string]string {
		out := map[string]string{}
		for info, err := range s.List(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			data, _, err := s.Get(ctx, info.Key, 100)
			if err != nil {
				t.Fatal(err)
			}
			out[info.Key] = string(data)
		}
		return out
	}
	if got, want := tree(d), map[string]string{"a": "new a", "b": "b"}; !equalMaps(got, want) {
		t.Errorf("through the dry run: %v, want %v", got, want)
	}
	if got, want := tree(inner), map[string]string{"a": "a", "c": "c"}; !equalMaps(got, want) {
		t.Errorf("the store beneath: %v, want %v", got, want)
	}
	ro := blob.DryRun(blob.ReadOnly(inner))
	if _, err := ro.Put(ctx, "n", nil, blob.Cond{}); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("a dry run over a read-only store: %v, want ErrReadOnly", err)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestDryRunRename: over a store with Renamer the dry run renames in its
// own entries, with the Renamer's checks, reading no content; the store
// beneath keeps its keys.
func TestDryRunRename(t *testing.T) {
	ctx := t.Context()
	inner := mem.New(nil)
	for k, v := range map[string]string{"d/a": "a", "d/sub/b": "b", "x": "x"} {
		if _, err := inner.Put(ctx, k, []byte(v), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	d := blob.DryRun(inner)
	r, ok := d.(blob.Renamer)
	if !ok {
		t.Fatal("a dry run over a Renamer offers no Rename")
	}
	if err := r.Rename(ctx, "d", "x"); !errors.Is(err, blob.ErrPrecondition) {
		t.Errorf("Rename onto a key: %v, want ErrPrecondition", err)
	}
	if err := r.Rename(ctx, "nothing", "y"); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Rename of nothing: %v, want ErrNotExist", err)
	}
	if err := r.Rename(ctx, "d", "d/in"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Rename into itself: %v, want ErrInvalidKey", err)
	}
	if err := r.Rename(ctx, "d", "e"); err != nil {
		t.Fatal(err)
	}
	tree := func(s blob.Store) map[string]string {
		out := map[string]string{}
		for info, err := range s.List(ctx, "") {
			if err != nil {
				t.Fatal(err)
			}
			data, _, err := s.Get(ctx, info.Key, 100)
			if err != nil {
				t.Fatal(err)
			}
			out[info.Key] = string(data)
		}
		return out
	}
	if got, want := tree(d), map[string]string{"e/a": "a", "e/sub/b": "b", "x": "x"}; !equalMaps(got, want) {
		t.Errorf("through the dry run: %v, want %v", got, want)
	}
	if got, want := tree(inner), map[string]string{"d/a": "a", "d/sub/b": "b", "x": "x"}; !equalMaps(got, want) {
		t.Errorf("the store beneath: %v, want %v", got, want)
	}
	if _, ok := blob.DryRun(plain{inner}).(blob.Renamer); ok {
		if err := blob.DryRun(plain{inner}).(blob.Renamer).Rename(ctx, "d", "f"); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Rename over a store without Renamer: %v, want errors.ErrUnsupported", err)
		}
	}
}
