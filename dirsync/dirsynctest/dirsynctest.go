// Package dirsynctest is the scenario suite of package dirsync: two folders
// ("two machines") synced through one store. Run it over any store with
//
//	dirsynctest.Run(t, func(t *testing.T) blob.Store { ... })
//
// newStore must return a new, empty store each time it is called (and
// arrange its cleanup). Each scenario compares the whole content of both
// folders and of the store with what it expects.
package dirsynctest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/dirsync"
)

// Run runs every scenario over stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Run("EditsArrive", func(t *testing.T) { testEditsArrive(t, newStore(t)) })
	t.Run("Conflict", func(t *testing.T) { testConflict(t, newStore(t)) })
	t.Run("SimultaneousSyncs", func(t *testing.T) { testSimultaneous(t, newStore(t)) })
	t.Run("Deletes", func(t *testing.T) { testDeletes(t, newStore(t)) })
	t.Run("DeleteCap", func(t *testing.T) { testDeleteCap(t, newStore(t)) })
	t.Run("CrashAtEveryStep", func(t *testing.T) { testCrash(t, newStore) })
}

// Machine is one folder with its own sync state.
type Machine struct {
	Name  string
	Dir   string
	State string
}

// NewMachine makes an empty folder and a state path for a machine.
func NewMachine(t *testing.T, name string) *Machine {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "memory")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return &Machine{Name: name, Dir: dir, State: filepath.Join(base, "state", "sync.json")}
}

// Options returns the options a machine syncs with.
func (m *Machine) Options() dirsync.Options {
	return dirsync.Options{StateFile: m.State, Machine: m.Name}
}

// Sync runs one pass of m against s.
func (m *Machine) Sync(t *testing.T, s blob.Store) (dirsync.Report, error) {
	t.Helper()
	return dirsync.Sync(t.Context(), m.Dir, s, m.Options())
}

// MustSync runs one pass and fails the test on any error.
func (m *Machine) MustSync(t *testing.T, s blob.Store) dirsync.Report {
	t.Helper()
	rep, err := m.Sync(t, s)
	if err != nil {
		t.Fatalf("%s: sync: %v (%s)", m.Name, err, rep.Summary())
	}
	return rep
}

// Write writes files (relative path → content) into the folder.
func (m *Machine) Write(t *testing.T, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(m.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// Remove deletes files from the folder.
func (m *Machine) Remove(t *testing.T, rels ...string) {
	t.Helper()
	for _, rel := range rels {
		if err := os.Remove(filepath.Join(m.Dir, filepath.FromSlash(rel))); err != nil {
			t.Fatal(err)
		}
	}
}

// Tree returns every regular file of the folder (relative path → content).
func (m *Machine) Tree(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(m.Dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.Dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// StoreTree returns every memory file of s (key → content), leaving out
// the storage layers' bookkeeping.
func StoreTree(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	infos, err := blob.ListAll(t.Context(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if blob.IsReserved(info.Key) {
			continue
		}
		data, _, err := s.Get(t.Context(), info.Key, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		out[info.Key] = string(data)
	}
	return out
}

// Expect compares a tree with what it must be, naming every difference.
func Expect(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if maps.Equal(got, want) {
		return
	}
	keys := slices.Sorted(maps.Keys(got))
	for k := range want {
		if _, ok := got[k]; !ok {
			keys = append(keys, k)
		}
	}
	var diffs []string
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !wok:
			diffs = append(diffs, fmt.Sprintf("  unexpected %s = %q", k, g))
		case !gok:
			diffs = append(diffs, fmt.Sprintf("  missing %s (want %q)", k, w))
		case g != w:
			diffs = append(diffs, fmt.Sprintf("  %s = %q, want %q", k, g, w))
		}
	}
	t.Errorf("%s differs:\n%s", what, strings.Join(diffs, "\n"))
}

func testEditsArrive(t *testing.T, s blob.Store) {
	a, b := NewMachine(t, "a"), NewMachine(t, "b")
	a.Write(t, map[string]string{"MEMORY.md": "# index\n", "notes/x.md": "x1\n", ".hidden": "h"})
	rep := a.MustSync(t, s)
	if got, want := rep.Summary(), "sync: 3 files, 3 uploaded, 0 downloaded, 0 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed"; got != want {
		t.Errorf("a's first pass:\n got %s\nwant %s", got, want)
	}
	rep = b.MustSync(t, s)
	if got, want := rep.Summary(), "sync: 3 files, 0 uploaded, 3 downloaded, 0 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed"; got != want {
		t.Errorf("b's first pass:\n got %s\nwant %s", got, want)
	}
	want := map[string]string{"MEMORY.md": "# index\n", "notes/x.md": "x1\n", ".hidden": "h"}
	Expect(t, "b's folder", b.Tree(t), want)

	b.Write(t, map[string]string{"notes/x.md": "x2\n", "notes/y.md": "y\n"})
	b.MustSync(t, s)
	rep = a.MustSync(t, s)
	if got, want := rep.Summary(), "sync: 4 files, 0 uploaded, 2 downloaded, 0 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed"; got != want {
		t.Errorf("a's second pass:\n got %s\nwant %s", got, want)
	}
	want = map[string]string{"MEMORY.md": "# index\n", "notes/x.md": "x2\n", "notes/y.md": "y\n", ".hidden": "h"}
	Expect(t, "a's folder", a.Tree(t), want)
	Expect(t, "the store", StoreTree(t, s), want)

	// A pass with nothing to do changes nothing and says so.
	rep = a.MustSync(t, s)
	if n := len(rep.Actions); n != 0 {
		t.Errorf("a pass with nothing to do did %d actions: %v", n, rep.Actions)
	}
}

func testConflict(t *testing.T, s blob.Store) {
	a, b := NewMachine(t, "a"), NewMachine(t, "b")
	a.Write(t, map[string]string{"n.md": "base\n"})
	a.MustSync(t, s)
	b.MustSync(t, s)

	a.Write(t, map[string]string{"n.md": "from a\n"})
	b.Write(t, map[string]string{"n.md": "from b\n"})
	a.MustSync(t, s) // a's edit reaches the store first
	rep, err := b.Sync(t, s)
	if !errors.Is(err, dirsync.ErrConflict) {
		t.Fatalf("b's pass: err = %v, want ErrConflict", err)
	}
	if n := rep.Count(dirsync.OpConflict); n != 1 {
		t.Fatalf("b's pass: %d conflicts, want 1 (%v)", n, rep.Actions)
	}
	ck := rep.Actions[0].Note
	if !strings.HasPrefix(ck, "n.conflict-b-") || !strings.HasSuffix(ck, ".md") {
		t.Errorf("conflict name %q, want n.conflict-b-XXXXXXXX.md", ck)
	}
	a.MustSync(t, s)
	want := map[string]string{"n.md": "from a\n", ck: "from b\n"}
	Expect(t, "b's folder", b.Tree(t), want)
	Expect(t, "a's folder", a.Tree(t), want)
	Expect(t, "the store", StoreTree(t, s), want)
	// Settled: no more conflicts, on either side.
	for _, m := range []*Machine{a, b} {
		if rep := m.MustSync(t, s); len(rep.Actions) != 0 {
			t.Errorf("%s: a settled pass did %v", m.Name, rep.Actions)
		}
	}
}

// testSimultaneous starts two passes that both edited one file at the same
// moment: whichever loses the store's conditional write keeps its content
// under a conflict name, so both edits survive.
func testSimultaneous(t *testing.T, s blob.Store) {
	a, b := NewMachine(t, "a"), NewMachine(t, "b")
	a.Write(t, map[string]string{"n.md": "base\n"})
	a.MustSync(t, s)
	b.MustSync(t, s)
	a.Write(t, map[string]string{"n.md": "from a\n"})
	b.Write(t, map[string]string{"n.md": "from b\n"})

	var start sync.WaitGroup
	start.Add(1)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, m := range []*Machine{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start.Wait()
			_, errs[i] = dirsync.Sync(context.Background(), m.Dir, s, m.Options())
		}()
	}
	start.Done()
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, dirsync.ErrConflict) {
			t.Fatalf("machine %d: %v", i, err)
		}
	}
	// Two more rounds carry every conflict copy everywhere.
	for range 2 {
		for _, m := range []*Machine{a, b} {
			if _, err := m.Sync(t, s); err != nil && !errors.Is(err, dirsync.ErrConflict) {
				t.Fatal(err)
			}
		}
	}
	ta, tb, ts := a.Tree(t), b.Tree(t), StoreTree(t, s)
	Expect(t, "b's folder against a's", tb, ta)
	Expect(t, "the store against a's folder", ts, ta)
	contents := slices.Sorted(maps.Values(ta))
	if want := []string{"from a\n", "from b\n"}; !slices.Equal(contents, want) {
		t.Errorf("after simultaneous edits the folders hold %q, want both edits %q", contents, want)
	}
}

func testDeletes(t *testing.T, s blob.Store) {
	a, b := NewMachine(t, "a"), NewMachine(t, "b")
	a.Write(t, map[string]string{"d/gone.md": "1", "kept.md": "2", "edited.md": "3"})
	a.MustSync(t, s)
	b.MustSync(t, s)

	a.Remove(t, "d/gone.md", "edited.md")
	b.Write(t, map[string]string{"edited.md": "3 edited on b"}) // deleted on a, changed on b: the change wins
	rep := a.MustSync(t, s)
	if got, want := rep.Count(dirsync.OpDeleteRemote), 2; got != want {
		t.Errorf("a deleted %d files in the store, want %d: %v", got, want, rep.Actions)
	}
	rep = b.MustSync(t, s) // d/gone.md is deleted here; edited.md goes back up
	if got := rep.Count(dirsync.OpDeleteLocal); got != 1 {
		t.Errorf("b deleted %d files locally, want 1: %v", got, rep.Actions)
	}
	a.MustSync(t, s)
	want := map[string]string{"kept.md": "2", "edited.md": "3 edited on b"}
	Expect(t, "a's folder", a.Tree(t), want)
	Expect(t, "b's folder", b.Tree(t), want)
	Expect(t, "the store", StoreTree(t, s), want)
	if _, err := os.Stat(filepath.Join(b.Dir, "d")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("b's emptied directory d was left behind (stat: %v)", err)
	}
}

func testDeleteCap(t *testing.T, s blob.Store) {
	a := NewMachine(t, "a")
	files := map[string]string{}
	for i := range 25 {
		files[fmt.Sprintf("f%02d.md", i)] = fmt.Sprint(i)
	}
	a.Write(t, files)
	a.MustSync(t, s)
	var gone []string
	for i := range 21 {
		gone = append(gone, fmt.Sprintf("f%02d.md", i))
	}
	a.Remove(t, gone...)
	rep, err := a.Sync(t, s)
	if !errors.Is(err, dirsync.ErrTooManyDeletes) {
		t.Fatalf("a pass deleting 21 files: err = %v, want ErrTooManyDeletes", err)
	}
	if want := "dirsync: too many deletes: the pass would delete 21 files, over the cap of 20; nothing was changed (allow it with AllowDeletes, the CLI's --allow-deletes)"; err.Error() != want {
		t.Errorf("error text:\n got %s\nwant %s", err, want)
	}
	if len(rep.Actions) != 0 {
		t.Errorf("a stopped pass reported actions: %v", rep.Actions)
	}
	Expect(t, "the store after the stopped pass", StoreTree(t, s), files)
	opts := a.Options()
	opts.AllowDeletes = true
	if _, err := dirsync.Sync(t.Context(), a.Dir, s, opts); err != nil {
		t.Fatal(err)
	}
	Expect(t, "the store after an allowed pass", StoreTree(t, s), a.Tree(t))
	if n := len(StoreTree(t, s)); n != 4 {
		t.Errorf("the store holds %d files, want 4", n)
	}
}

// testCrash interrupts a pass at every store call in turn (that call and
// every later one fail, as if the process had died there), then runs the
// pass again: both machines converge and no content is lost.
func testCrash(t *testing.T, newStore func(t *testing.T) blob.Store) {
	for n := 1; ; n++ {
		s := newStore(t)
		a, b := NewMachine(t, "a"), NewMachine(t, "b")
		a.Write(t, map[string]string{"up.md": "u0", "down.md": "d0", "del.md": "x", "both.md": "b0"})
		a.MustSync(t, s)
		b.MustSync(t, s)
		// b changes everything the store will then hold; a changes its own copy.
		b.Write(t, map[string]string{"down.md": "d1 from b", "both.md": "b1 from b"})
		b.Remove(t, "del.md")
		b.MustSync(t, s)
		a.Write(t, map[string]string{"up.md": "u1 from a", "both.md": "b1 from a", "new.md": "n"})

		f := &failAfter{Store: s, n: int64(n)}
		_, err := a.Sync(t, f)
		crashed := f.failed.Load()
		if crashed && err == nil {
			t.Fatalf("crash at call %d: the pass reported success", n)
		}
		if !crashed && err != nil && !errors.Is(err, dirsync.ErrConflict) {
			t.Fatalf("no crash (call %d): %v", n, err)
		}
		for range 2 {
			for _, m := range []*Machine{a, b} {
				if _, err := m.Sync(t, s); err != nil && !errors.Is(err, dirsync.ErrConflict) {
					t.Fatalf("crash at call %d, then %s: %v", n, m.Name, err)
				}
			}
		}
		ta := a.Tree(t)
		Expect(t, fmt.Sprintf("crash at call %d: b's folder against a's", n), b.Tree(t), ta)
		Expect(t, fmt.Sprintf("crash at call %d: the store against a's folder", n), StoreTree(t, s), ta)
		contents := slices.Sorted(maps.Values(ta))
		want := []string{"b1 from a", "b1 from b", "d1 from b", "n", "u1 from a"}
		if !slices.Equal(contents, want) {
			t.Fatalf("crash at call %d: the folders hold %q, want %q", n, contents, want)
		}
		if !crashed {
			if n < 3 {
				t.Fatalf("the pass made only %d store calls", n-1)
			}
			return // every call of the pass has been interrupted once
		}
	}
}

// failAfter fails its n-th storage call and every later one.
type failAfter struct {
	blob.Store
	n      int64
	calls  atomic.Int64
	failed atomic.Bool
}

var errCrash = errors.New("injected crash")

func (f *failAfter) hit() error {
	if f.calls.Add(1) >= f.n {
		f.failed.Store(true)
		return errCrash
	}
	return nil
}

func (f *failAfter) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if err := f.hit(); err != nil {
		return nil, blob.Info{}, err
	}
	return f.Store.Get(ctx, key, limit)
}

func (f *failAfter) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := f.hit(); err != nil {
		return blob.Info{}, err
	}
	return f.Store.Stat(ctx, key)
}

func (f *failAfter) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if err := f.hit(); err != nil {
		return blob.Info{}, err
	}
	return f.Store.Put(ctx, key, data, c)
}

func (f *failAfter) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := f.hit(); err != nil {
		return err
	}
	return f.Store.Delete(ctx, key, c)
}

func (f *failAfter) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		if err := f.hit(); err != nil {
			yield(blob.Info{}, err)
			return
		}
		for info, err := range f.Store.List(ctx, prefix) {
			if !yield(info, err) {
				return
			}
		}
	}
}
