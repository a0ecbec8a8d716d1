package gate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
)

// newTree returns a Tree over a new in-memory store holding files, with
// opts.
func newTree(t *testing.T, opts gate.Options, files ...string) *gate.Tree {
	t.Helper()
	store := mem.New(nil)
	g, err := gate.New(store, opts)
	if err != nil {
		t.Fatalf("gate.New: %v", err)
	}
	for _, key := range files {
		if _, err := g.Create(t.Context(), key, []byte("x"), false); err != nil {
			t.Fatalf("Create(%q): %v", key, err)
		}
	}
	return g
}

// Every refusal is an *Error of its kind, about the key it names, with the
// figures wording needs, and nothing was written.
func TestRefusals(t *testing.T) {
	ctx := t.Context()
	small := gate.Options{MaxFiles: 2, MaxFileBytes: 4}
	cases := []struct {
		name string
		do   func(g *gate.Tree) error
		want gate.Error
	}{
		{"exists", func(g *gate.Tree) error { _, err := g.Create(ctx, "a", []byte("y"), false); return err },
			gate.Error{Kind: gate.ErrExists, Key: "a"}},
		{"a directory exists", func(g *gate.Tree) error { _, err := g.Create(ctx, "d", []byte("y"), false); return err },
			gate.Error{Kind: gate.ErrExists, Key: "d"}},
		{"under a file", func(g *gate.Tree) error { _, err := g.Create(ctx, "a/b/c", []byte("y"), false); return err },
			gate.Error{Kind: gate.ErrNotDir, Key: "a"}},
		{"too large", func(g *gate.Tree) error { _, err := g.Create(ctx, "b", []byte("12345"), false); return err },
			gate.Error{Kind: gate.ErrTooLarge, Key: "b", Size: 5, Limit: 4}},
		{"full", func(g *gate.Tree) error { _, err := g.Create(ctx, "b", []byte("y"), false); return err },
			gate.Error{Kind: gate.ErrFull, Key: "b", Size: 2, Limit: 2}},
		{"root", func(g *gate.Tree) error { return g.Remove(ctx, "", blob.Cond{}, true) },
			gate.Error{Kind: gate.ErrRoot}},
		{"remove a directory as a file", func(g *gate.Tree) error { return g.Remove(ctx, "d", blob.Cond{}, false) },
			gate.Error{Kind: gate.ErrNotFile, Key: "d"}},
		{"remove nothing", func(g *gate.Tree) error { return g.Remove(ctx, "nothing", blob.Cond{}, true) },
			gate.Error{Kind: gate.ErrNotFound, Key: "nothing"}},
		{"move nothing", func(g *gate.Tree) error { return g.Move(ctx, "nothing", "b") },
			gate.Error{Kind: gate.ErrNotFound, Key: "nothing"}},
		{"move onto a file", func(g *gate.Tree) error { return g.Move(ctx, "d", "a") },
			gate.Error{Kind: gate.ErrExists, Key: "a"}},
		{"move into itself", func(g *gate.Tree) error { return g.Move(ctx, "d", "d/e") },
			gate.Error{Kind: gate.ErrIntoItself, Key: "d/e"}},
		{"move under a file", func(g *gate.Tree) error { return g.Move(ctx, "d", "a/e") },
			gate.Error{Kind: gate.ErrNotDir, Key: "a"}},
		{"edit a directory", func(g *gate.Tree) error {
			_, err := g.Edit(ctx, "d", func(b []byte) ([]byte, error) { return b, nil })
			return err
		}, gate.Error{Kind: gate.ErrNotFile, Key: "d"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newTree(t, small, "a", "d/f")
			before := keys(t, g)
			err := c.do(g)
			got, ok := errors.AsType[*gate.Error](err)
			if !ok {
				t.Fatalf("error %v (%T), want a *gate.Error", err, err)
			}
			if got.Kind != c.want.Kind || got.Key != c.want.Key || got.Size != c.want.Size || got.Limit != c.want.Limit {
				t.Errorf("refusal %+v, want %+v", *got, c.want)
			}
			if !errors.Is(err, c.want.Kind) {
				t.Errorf("errors.Is(%v, %v) = false", err, c.want.Kind)
			}
			if after := keys(t, g); !slices.Equal(before, after) {
				t.Errorf("the files went from %v to %v", before, after)
			}
		})
	}
}

// A key no memory path maps to (reserved in any case, empty segment,
// leading or trailing slash, longer than the store holds) is refused before
// anything is read or written, whatever the operation, and a move neither
// into nor out of the reserved names.
func TestInvalidKeys(t *testing.T) {
	g := newTree(t, gate.Options{}, "a")
	ctx := t.Context()
	same := func(b []byte) ([]byte, error) { return b, nil }
	for _, key := range []string{".cloudmem/files", "a/.CloudMem-key", ".CLOUDMEM", "a//b", "/a", "a/", strings.Repeat("k", blob.MaxKeyLen+1)} {
		_, errCreate := g.Create(ctx, key, []byte("x"), false)
		_, errReplace := g.Replace(ctx, key, []byte("x"), "1")
		_, errEdit := g.Edit(ctx, key, same)
		_, _, errGet := g.Get(ctx, key)
		_, errStat := g.Stat(ctx, key)
		for name, err := range map[string]error{
			"Create": errCreate, "Replace": errReplace, "Edit": errEdit, "Get": errGet, "Stat": errStat,
			"Remove": g.Remove(ctx, key, blob.Cond{}, true), "Move from": g.Move(ctx, key, "b"), "Move to": g.Move(ctx, "a", key),
		} {
			if !errors.Is(err, gate.ErrInvalidKey) {
				t.Errorf("%s(%.40q): %v, want ErrInvalidKey", name, key, err)
			}
		}
	}
	if got := keys(t, g); !slices.Equal(got, []string{"a"}) {
		t.Errorf("files %v, want a alone", got)
	}
}

// A read-only Tree refuses every write, and reads.
func TestReadOnly(t *testing.T) {
	store := mem.New(nil)
	if _, err := store.Put(t.Context(), "a", []byte("x"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(store, gate.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	_, errCreate := g.Create(ctx, "b", []byte("x"), false)
	_, errEdit := g.Edit(ctx, "a", func(b []byte) ([]byte, error) { return b, nil })
	for name, err := range map[string]error{
		"create": errCreate, "edit": errEdit,
		"remove": g.Remove(ctx, "a", blob.Cond{}, true), "move": g.Move(ctx, "a", "c"),
	} {
		if !errors.Is(err, gate.ErrReadOnly) {
			t.Errorf("%s: %v, want ErrReadOnly", name, err)
		}
	}
	if data, _, err := g.Get(ctx, "a"); err != nil || string(data) != "x" {
		t.Errorf("Get: %q, %v; want x", data, err)
	}
}

// An error from an edit's function ends the edit unwritten and comes back
// as it is; a successful edit says what it read and wrote.
func TestEdit(t *testing.T) {
	g := newTree(t, gate.Options{}, "a")
	ctx := t.Context()
	mine := errors.New("no")
	if _, err := g.Edit(ctx, "a", func([]byte) ([]byte, error) { return nil, mine }); err != mine {
		t.Errorf("Edit: %v, want the function's error itself", err)
	}
	e, err := g.Edit(ctx, "a", func(b []byte) ([]byte, error) { return append(b, 'y'), nil })
	if err != nil || string(e.Read) != "x" || string(e.Content) != "xy" || e.Version == "" {
		t.Fatalf("Edit: %+v, %v; want x read, xy written, a version", e, err)
	}
	if data, info, err := g.Get(ctx, "a"); err != nil || string(data) != "xy" || info.Version != e.Version {
		t.Errorf("Get: %q at %q, %v; want xy at %q", data, info.Version, err, e.Version)
	}
}

func keys(t *testing.T, g *gate.Tree) []string {
	t.Helper()
	var out []string
	for info, err := range g.List(context.WithoutCancel(t.Context()), "") {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		out = append(out, info.Key)
	}
	return out
}

// A read-only Tree refuses a write before it looks at the key, as
// docs/spec.md orders the checks (read-only, then the paths), whatever the
// key: the refusal does not depend on what the caller sent.
func TestReadOnlyBeforeKey(t *testing.T) {
	g, err := gate.New(mem.New(nil), gate.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, key := range []string{".cloudmem/files", "a//b", "/a"} {
		_, errCreate := g.Create(ctx, key, []byte("x"), false)
		_, errReplace := g.Replace(ctx, key, []byte("x"), "1")
		_, errEdit := g.Edit(ctx, key, func(b []byte) ([]byte, error) { return b, nil })
		for name, err := range map[string]error{
			"Create": errCreate, "Replace": errReplace, "Edit": errEdit,
			"Remove": g.Remove(ctx, key, blob.Cond{}, true), "Move": g.Move(ctx, key, "b"),
			"Move to": g.Move(ctx, "b", key),
		} {
			if !errors.Is(err, gate.ErrReadOnly) || errors.Is(err, gate.ErrInvalidKey) {
				t.Errorf("%s(%q): %v, want ErrReadOnly alone", name, key, err)
			}
		}
	}
}

// The reads take memory files' keys too: a reserved key (the gate's own
// file count, another layer's object) or a malformed one is refused, and
// the object is not read.
func TestReadsRefuseInvalidKeys(t *testing.T) {
	store := mem.New(nil)
	if _, err := store.Put(t.Context(), "d/.cloudmem-key", []byte("secret"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(store, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := g.Create(ctx, "a", []byte("x"), false); err != nil { // writes the file count
		t.Fatal(err)
	}
	for _, key := range []string{".cloudmem/files", "d/.cloudmem-key", "a//b", "/a", "a/"} {
		data, _, err := g.Get(ctx, key)
		if !errors.Is(err, gate.ErrInvalidKey) || data != nil {
			t.Errorf("Get(%q): %q, %v; want ErrInvalidKey and nothing read", key, data, err)
		}
		if _, err := g.Stat(ctx, key); !errors.Is(err, gate.ErrInvalidKey) {
			t.Errorf("Stat(%q): %v, want ErrInvalidKey", key, err)
		}
		if _, err := g.IsDir(ctx, key); !errors.Is(err, gate.ErrInvalidKey) {
			t.Errorf("IsDir(%q): %v, want ErrInvalidKey", key, err)
		}
	}
	if data, _, err := g.Get(ctx, "a"); err != nil || string(data) != "x" {
		t.Errorf("Get(a): %q, %v; want x", data, err)
	}
	if dir, err := g.IsDir(ctx, ""); err != nil || !dir {
		t.Errorf("IsDir(root): %v, %v; want true", dir, err)
	}
}

// A Remove conditional on a file's version never deletes a directory: the
// file at that version may have been replaced by a directory of another
// writer's files since, which the condition does not cover. With dirs, a
// condition is refused as the caller's mistake, and nothing is deleted.
func TestRemoveConditionNeverDeletesADirectory(t *testing.T) {
	// A store may report a conditional Delete of a missing key as
	// ErrNotExist (as S3 does) rather than ErrPrecondition.
	g, err := gate.New(missingIsNotExist{mem.New(nil)}, gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := g.Create(ctx, "a", []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	_, info, err := g.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	// Another writer replaces the file a by the directory a.
	if err := g.Remove(ctx, "a", blob.Cond{}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Create(ctx, "a/theirs", []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	for _, cond := range []blob.Cond{{IfVersion: info.Version}, {IfAbsent: true}} {
		err := g.Remove(ctx, "a", cond, true)
		if err == nil || errors.Is(err, gate.ErrNotFound) {
			t.Errorf("Remove(a, %+v, dirs): %v, want the condition refused", cond, err)
		}
	}
	if got := keys(t, g); !slices.Equal(got, []string{"a/theirs"}) {
		t.Errorf("files %v, want [a/theirs]", got)
	}
}

// missingIsNotExist is a store whose conditional Delete of a missing key
// fails with blob.ErrNotExist.
type missingIsNotExist struct{ blob.Store }

func (s missingIsNotExist) Delete(ctx context.Context, key string, cond blob.Cond) error {
	if cond != (blob.Cond{}) {
		if _, err := s.Stat(ctx, key); errors.Is(err, blob.ErrNotExist) {
			return err
		}
	}
	return s.Store.Delete(ctx, key, cond)
}
