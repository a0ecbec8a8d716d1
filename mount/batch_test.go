package mount_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mount"
)

// TestBatchCapabilities checks the table's batch deletes, versioned deletes
// and copies: each key goes to its mount's store (and its capability there),
// keys of two mounts are served by both, and a key the table refuses (in a
// read-only mount, outside every mount) fails the whole call with nothing
// deleted.
func TestBatchCapabilities(t *testing.T) {
	ctx := t.Context()
	a, b, ro := blob.NewCounter(&s3Like{Store: mem.New(nil)}), blob.NewCounter(mem.New(nil)), mem.New(nil)
	tab := newTable(t, mount.Mount{Name: "a", Store: a}, mount.Mount{Name: "b", Store: b},
		mount.Mount{Name: "ro", Store: ro, ReadOnly: true})
	for _, k := range []string{"a/1", "a/2", "a/3", "b/1", "b/2"} {
		put(t, tab, k, k)
	}
	put(t, ro, "1", "ro/1")
	a.Reset()
	b.Reset()

	for _, keys := range [][]string{{"a/1", "ro/1"}, {"a/1", "x/1"}, {"a/1", "b"}} {
		if err := blob.DeleteKeys(ctx, tab, keys); err == nil {
			t.Errorf("DeleteKeys(%q) succeeded", keys)
		}
	}
	if err := blob.DeleteKeys(ctx, tab, []string{"a/1", "ro/1"}); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("DeleteKeys into a read-only mount: %v, want ErrReadOnly", err)
	}
	if got := a.Counts().Total() + b.Counts().Total(); got != 0 {
		t.Fatalf("refused DeleteKeys calls reached the stores: a %+v, b %+v", a.Counts(), b.Counts())
	}

	if err := blob.DeleteKeys(ctx, tab, []string{"a/1", "b/1"}); err != nil {
		t.Fatalf("DeleteKeys across two mounts: %v", err)
	}
	// a's batch capability took its key; b, without one, one Delete.
	if ga, gb := a.Counts(), b.Counts(); ga != (blob.Counts{DeleteBatch: 1}) || gb != (blob.Counts{Delete: 1}) {
		t.Errorf("calls a %+v, b %+v; want one DeleteBatch on a, one Delete on b", ga, gb)
	}

	info2, err := tab.Stat(ctx, "a/2")
	if err != nil {
		t.Fatal(err)
	}
	info3 := put(t, tab, "a/3", "rewritten")
	b2, _ := tab.Stat(ctx, "b/2")
	a.Reset()
	errs, err := blob.DeleteBatch(ctx, tab, []blob.Info{info2, {Key: "a/3", Version: "stale"}, b2})
	if err != nil || len(errs) != 3 || errs[0] != nil || !errors.Is(errs[1], blob.ErrPrecondition) || errs[2] != nil {
		t.Fatalf("DeleteBatch = %v, %v; want nil, ErrPrecondition, nil", errs, err)
	}
	if got := a.Counts(); got != (blob.Counts{DeleteBatch: 1}) {
		t.Errorf("calls on a %+v, want one DeleteBatch", got)
	}
	if _, err := blob.DeleteBatch(ctx, tab, []blob.Info{info3, {Key: "ro/1", Version: "v"}}); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("DeleteBatch into a read-only mount: %v, want ErrReadOnly", err)
	}
	if got, want := keys(t, tab, ""), []string{"a/3", "ro/1"}; !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}

	// Copies: inside a mount through its store (mem has no Copier, so
	// blob.Copy reads and writes), across mounts by reading and writing,
	// and never into a read-only mount.
	for _, dst := range []string{"a/copy", "b/copy"} {
		if _, _, err := blob.Copy(ctx, tab, "a/3", dst, info3.Version); err != nil {
			t.Errorf("Copy to %s: %v", dst, err)
		}
	}
	// The table leaves every other case to blob.Copy's reads and writes,
	// whose errors come in the contract's order: a missing source first.
	for _, dst := range []string{"ro/copy", "b/other", "x/copy", "b"} {
		if _, err := tab.(blob.Copier).Copy(ctx, "a/3", dst, info3.Version); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("the table's Copy to %s: %v, want ErrUnsupported", dst, err)
		}
	}
	if _, _, err := blob.Copy(ctx, tab, "a/3", "ro/copy", info3.Version); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("Copy into a read-only mount: %v, want ErrReadOnly", err)
	}
	if _, _, err := blob.Copy(ctx, tab, "a/missing", "ro/copy", "v"); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Copy of a missing source into a read-only mount: %v, want ErrNotExist", err)
	}
	if got, want := keys(t, tab, ""), []string{"a/3", "a/copy", "b/copy", "ro/1"}; !slices.Equal(got, want) {
		t.Errorf("after the copies %q, want %q", got, want)
	}
}
