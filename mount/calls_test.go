package mount_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// TestCallTable checks the storage calls of a mounted store, as the
// table of docs/mounts.md gives them, against the store alone: a command inside one
// mount makes on that mount's store exactly the calls it makes on a store
// alone (which memory's own call table gives), less a Get or Stat of the
// mount point itself, which the table answers, and none on the other
// mounts; the root view makes one List on each mount; a rename across
// mounts makes, split between the two, the calls of a rename on a store
// alone without blob.Tree, less the same; and a command refused by a
// mount rule makes none.
func TestCallTable(t *testing.T) {
	// Each store kind once: mem (atomic Rename and DeleteTree), and one with
	// S3's capabilities (batch and versioned deletes, no Rename or
	// DeleteTree), whose directory deletes and moves the table must hand to
	// those capabilities as the store alone would use them.
	for _, kind := range []struct {
		name string
		wrap func(blob.Store) blob.Store
	}{
		{"mem", func(s blob.Store) blob.Store { return s }},
		{"s3-like", func(s blob.Store) blob.Store { return &s3Like{Store: s} }},
	} {
		t.Run(kind.name, func(t *testing.T) { testCallTable(t, kind.wrap) })
	}
}

func testCallTable(t *testing.T, kind func(blob.Store) blob.Store) {
	files := []string{"f.md", "d/x.md", "d/y.md"}
	// run executes input over a fresh table (a holding files, b empty) and
	// returns the calls on a and b.
	run := func(t *testing.T, input string) (a, b blob.Counts) {
		ca, cb := blob.NewCounter(kind(mem.New(nil))), blob.NewCounter(kind(mem.New(nil)))
		for _, key := range files {
			put(t, ca, key, "f\n")
		}
		ca.Reset()
		execute(t, newTable(t, mount.Mount{Name: "a", Store: ca}, mount.Mount{Name: "b", Store: cb}), memory.Options{}, input)
		return ca.Counts(), cb.Counts()
	}
	// alone executes input over a store alone holding the same files under
	// a/ and returns its calls.
	alone := func(t *testing.T, input string, wrap func(blob.Store) blob.Store) blob.Counts {
		s := mem.New(nil)
		for _, key := range files {
			put(t, s, "a/"+key, "f\n")
		}
		c := blob.NewCounter(wrap(kind(s)))
		execute(t, pointsAnswered{c}, memory.Options{}, input)
		return c.Counts()
	}
	same := func(s blob.Store) blob.Store { return s }

	for _, input := range []string{
		`{"command":"view","path":"/memories/a"}`,
		`{"command":"view","path":"/memories/a/f.md"}`,
		`{"command":"view","path":"/memories/a/d"}`,
		`{"command":"create","path":"/memories/a/new.md","file_text":"x"}`,
		`{"command":"create","path":"/memories/a/d/x.md/y","file_text":"x"}`,
		`{"command":"str_replace","path":"/memories/a/f.md","old_str":"f","new_str":"g"}`,
		`{"command":"insert","path":"/memories/a/f.md","insert_line":0,"insert_text":"x"}`,
		`{"command":"delete","path":"/memories/a/f.md"}`,
		`{"command":"delete","path":"/memories/a/d"}`,
		`{"command":"rename","old_path":"/memories/a/f.md","new_path":"/memories/a/g.md"}`,
		`{"command":"rename","old_path":"/memories/a/d","new_path":"/memories/a/e/d"}`,
	} {
		t.Run(input, func(t *testing.T) {
			a, b := run(t, input)
			if want := alone(t, input, same); a != want || b != (blob.Counts{}) {
				t.Errorf("mounts a %+v and b %+v, want %+v and none", a, b, want)
			}
		})
	}
	t.Run("root", func(t *testing.T) {
		a, b := run(t, `{"command":"view","path":"/memories"}`)
		if want := (blob.Counts{List: 1}); a != want || b != want {
			t.Errorf("mounts a %+v and b %+v, want %+v each", a, b, want)
		}
	})
	for input, lists := range map[string]int64{
		`{"command":"rename","old_path":"/memories/a/f.md","new_path":"/memories/b/f.md"}`: 1,
		`{"command":"rename","old_path":"/memories/a/d","new_path":"/memories/b/d"}`:       3,
	} {
		t.Run(input, func(t *testing.T) {
			a, b := run(t, input)
			// Besides: the files are reserved in b's file count before
			// they are copied (a Stat of the source, for a directory a
			// List of the source and of the destination, a Get of the
			// count, a List of b as it has none yet, a Put of the
			// reservation and one taking it off the pending list), and 1
			// Get of a's count (none here, else marked changed).
			want := add(alone(t, input, withoutRename), blob.Counts{Get: 2, Stat: 1, Put: 2, List: lists})
			if sum := add(a, b); sum != want || a.Put != 0 || b.Delete != 0 {
				t.Errorf("mounts a %+v and b %+v (sum %+v), want a sum of %+v with no Put on a, no Delete on b", a, b, sum, want)
			}
		})
	}
	for _, input := range []string{
		`{"command":"delete","path":"/memories/a"}`,
		`{"command":"rename","old_path":"/memories/a","new_path":"/memories/c"}`,
		`{"command":"create","path":"/memories/x.md","file_text":"x"}`,
		`{"command":"rename","old_path":"/memories/a/f.md","new_path":"/memories/b"}`,
	} {
		t.Run(input, func(t *testing.T) {
			if a, b := run(t, input); a.Total()+b.Total() != 0 {
				t.Errorf("a refused command made calls: a %+v, b %+v", a, b)
			}
		})
	}
}

func add(x, y blob.Counts) blob.Counts {
	return blob.Counts{Get: x.Get + y.Get, Stat: x.Stat + y.Stat, Put: x.Put + y.Put, Delete: x.Delete + y.Delete,
		List: x.List + y.List, Rename: x.Rename + y.Rename, DeleteTree: x.DeleteTree + y.DeleteTree,
		Copy: x.Copy + y.Copy, DeleteBatch: x.DeleteBatch + y.DeleteBatch}
}

// withoutRename hides s's atomic Rename, and with it every capability of mem
// (which has no others that a rename uses); a store without an atomic Rename
// keeps its capabilities.
func withoutRename(s blob.Store) blob.Store {
	if _, ok := s.(blob.Tree); ok {
		return coreOnly{s}
	}
	return s
}

// s3Like has the capabilities of the S3 store over a store without any:
// batch deletes, unconditional or versioned, each one call however many
// keys.
type s3Like struct{ blob.Store }

func (s *s3Like) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	errs := make([]error, len(infos))
	for i, info := range infos {
		errs[i] = s.Store.Delete(ctx, info.Key, blob.Cond{IfVersion: info.Version})
		if info.Version == "" && errors.Is(errs[i], blob.ErrNotExist) {
			errs[i] = nil
		}
	}
	return errs, nil
}

// pointsAnswered answers a Get or Stat of the key "a" or "b" (the mount
// points) with blob.ErrNotExist, as the table does, without a call; it
// forwards every other call, capabilities included.
type pointsAnswered struct{ *blob.Counter }

func (p pointsAnswered) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if key == "a" || key == "b" {
		return nil, blob.Info{}, blob.ErrNotExist
	}
	return p.Counter.Get(ctx, key, limit)
}

func (p pointsAnswered) Stat(ctx context.Context, key string) (blob.Info, error) {
	if key == "a" || key == "b" {
		return blob.Info{}, blob.ErrNotExist
	}
	return p.Counter.Stat(ctx, key)
}
