package gate_test

import (
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
	"github.com/cloudmem/cloudmem/mount"
)

// A move across two mounts adds the files it moves to the new path's
// mount: it is refused as full, and nothing moves, when they would take
// that mount over its file limit (docs/spec.md "Mounts"); one that fits is
// counted, so that the mount's next create is refused at the limit.
func TestMoveAcrossMountsKeepsTheFileLimit(t *testing.T) {
	ctx := t.Context()
	table, err := mount.New([]mount.Mount{
		{Name: "a", Store: mem.New(nil)},
		{Name: "b", Store: blob.WithLimits(mem.New(nil), blob.Limits{MaxFiles: 3})},
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(table, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a/x", "a/d/y", "a/d/z", "a/e/1", "a/e/2", "a/e/3", "b/1"} {
		if _, err := g.Create(ctx, key, []byte("content of "+key), false); err != nil {
			t.Fatalf("Create(%q): %v", key, err)
		}
	}
	refused := func(err error, n int64, what string) {
		t.Helper()
		if !isFull(err, n, 3) {
			t.Errorf("%s: %v, want full at %d of 3", what, err, n)
		}
	}
	refused(g.Move(ctx, "a/e", "b/e"), 1, "Move(a/e, b/e), 3 files into a mount with 2 places")
	if err := g.Move(ctx, "a/d", "b/d"); err != nil {
		t.Fatalf("Move(a/d, b/d), 2 files into a mount with 2 places: %v", err)
	}
	refused(g.Move(ctx, "a/x", "b/x"), 3, "Move(a/x, b/x) into a full mount")
	_, err = g.Create(ctx, "b/2", []byte("x"), false)
	refused(err, 3, "Create(b/2) in a full mount")
	want := []string{"a/e/1", "a/e/2", "a/e/3", "a/x", "b/1", "b/d/y", "b/d/z"}
	if got := keys(t, g); !slices.Equal(got, want) {
		t.Errorf("the files are %v, want %v", got, want)
	}
}
