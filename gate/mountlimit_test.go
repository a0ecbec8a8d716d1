package gate_test

import (
	"errors"
	"slices"
	"strings"
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

// On a mount table every write of a key outside every mount, or at a mount
// point, is refused by the gate itself, before any storage call, whoever
// calls it: no new top-level name comes into being, and no mount point is
// removed or moved.
func TestMountRulesOfTheGate(t *testing.T) {
	ctx := t.Context()
	counter := blob.NewCounter(mem.New(nil))
	table, err := mount.New([]mount.Mount{{Name: "a", Store: counter}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(table, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	same := func(b []byte) ([]byte, error) { return b, nil }
	for _, c := range []struct {
		name string
		err  func() error
		want error
	}{
		{"create outside", func() error { _, err := g.Create(ctx, "x/f", []byte("x"), false); return err }, gate.ErrNotMounted},
		{"create at the top", func() error { _, err := g.Create(ctx, "f", []byte("x"), false); return err }, gate.ErrNotMounted},
		{"replace outside", func() error { _, err := g.Replace(ctx, "x/f", []byte("x"), "1"); return err }, gate.ErrNotMounted},
		{"edit outside", func() error { _, err := g.Edit(ctx, "x/f", same); return err }, gate.ErrNotMounted},
		{"remove outside", func() error { return g.Remove(ctx, "x", blob.Cond{}, true) }, gate.ErrNotMounted},
		{"move out", func() error { return g.Move(ctx, "a/f", "x/f") }, gate.ErrNotMounted},
		{"move in", func() error { return g.Move(ctx, "x/f", "a/f") }, gate.ErrNotMounted},
		{"create a mount point", func() error { _, err := g.Create(ctx, "a", []byte("x"), false); return err }, gate.ErrExists},
		{"edit a mount point", func() error { _, err := g.Edit(ctx, "a", same); return err }, gate.ErrNotFile},
		{"remove a mount point", func() error { return g.Remove(ctx, "a", blob.Cond{}, true) }, gate.ErrMountPoint},
		{"move a mount point", func() error { return g.Move(ctx, "a", "a/b") }, gate.ErrMountPoint},
		{"move onto a mount point", func() error { return g.Move(ctx, "a/f", "a") }, gate.ErrExists},
	} {
		before := counter.Counts()
		if err := c.err(); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if after := counter.Counts(); after != before {
			t.Errorf("%s: storage calls %+v, want none", c.name, blob.Counts{Get: after.Get - before.Get, Stat: after.Stat - before.Stat,
				Put: after.Put - before.Put, Delete: after.Delete - before.Delete, List: after.List - before.List})
		}
	}
}

// A move into another mount brings its files under that mount's size limit
// as well: a file over it refuses the whole move (ErrTooLarge about the
// file's new key), and nothing moves. Within one mount a move rewrites no
// file, and no size limit applies.
func TestMoveAcrossMountsKeepsTheSizeLimit(t *testing.T) {
	ctx := t.Context()
	rawA := mem.New(nil)
	table, err := mount.New([]mount.Mount{
		{Name: "a", Store: rawA},
		{Name: "b", Store: blob.WithLimits(mem.New(nil), blob.Limits{MaxFileBytes: 10})},
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(table, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	big := []byte("twenty bytes, twenty")
	for key, data := range map[string][]byte{"a/big": big, "a/d/small": []byte("small"), "a/d/big": big} {
		if _, err := g.Create(ctx, key, data, false); err != nil {
			t.Fatalf("Create(%q): %v", key, err)
		}
	}
	for _, c := range []struct{ from, to, key string }{{"a/big", "b/big", "b/big"}, {"a/d", "b/d", "b/d/big"}} {
		err := g.Move(ctx, c.from, c.to)
		e, ok := errors.AsType[*gate.Error](err)
		if !ok || e.Kind != gate.ErrTooLarge || e.Key != c.key || e.Size != int64(len(big)) || e.Limit != 10 || e.Read {
			t.Errorf("Move(%q, %q): %v, want ErrTooLarge about %q, %d bytes over 10", c.from, c.to, err, c.key, len(big))
		}
	}
	if err := g.Move(ctx, "a/big", "a/e/big"); err != nil {
		t.Errorf("Move(a/big, a/e/big) within mount a: %v", err)
	}
	// An object over the read limit (put there by another program) is
	// refused as the move reads it, with the read's refusal.
	huge := make([]byte, gate.DefaultMaxImageBytes+1) // over mount a's read limit, the image limit
	if _, err := rawA.Put(ctx, "huge", huge, blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	err = g.Move(ctx, "a/huge", "b/huge")
	if e, ok := errors.AsType[*gate.Error](err); !ok || e.Kind != gate.ErrTooLarge || !e.Read || e.Key != "a/huge" {
		t.Errorf("Move(a/huge, b/huge): %v, want ErrTooLarge, too large to read, about a/huge", err)
	}
	if err := rawA.Delete(ctx, "huge", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"a/d/big", "a/d/small", "a/e/big"}
	if got := keys(t, g); !slices.Equal(got, want) {
		t.Errorf("the files are %v, want %v", got, want)
	}
}

// On a mount table a key longer than its own mount's store holds (a
// prefixed store holds shorter keys than the table's longest) is refused
// as ErrInvalidKey before any storage call, as one longer than every mount
// holds is.
func TestKeyBudgetOfTheMount(t *testing.T) {
	ctx := t.Context()
	inner := blob.NewCounter(mem.New(nil))
	prefixed, err := blob.Prefix(inner, strings.Repeat("p", 500))
	if err != nil {
		t.Fatal(err)
	}
	table, err := mount.New([]mount.Mount{{Name: "short", Store: prefixed}, {Name: "long", Store: mem.New(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(table, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	key := "short/" + strings.Repeat("k", blob.KeyBytes(prefixed)+1)
	if _, err := g.Create(ctx, key, []byte("x"), false); !errors.Is(err, gate.ErrInvalidKey) {
		t.Errorf("Create of a key too long for its mount: %v, want ErrInvalidKey", err)
	}
	if err := g.Move(ctx, "long/a", key); !errors.Is(err, gate.ErrInvalidKey) {
		t.Errorf("Move to a key too long for its mount: %v, want ErrInvalidKey", err)
	}
	if c := inner.Counts(); c != (blob.Counts{}) {
		t.Errorf("storage calls %+v, want none", c)
	}
}
