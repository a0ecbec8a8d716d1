package dirsync_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/dirsync"
	"github.com/cloudmem/cloudmem/dirsync/dirsynctest"
	"github.com/cloudmem/cloudmem/memory"
)

func newMem(t *testing.T) blob.Store { return mem.New(nil) }

func newFile(t *testing.T) blob.Store {
	s, err := file.Open(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blob.Close(s) })
	return s
}

func TestScenariosMem(t *testing.T)  { dirsynctest.Run(t, newMem) }
func TestScenariosFile(t *testing.T) { dirsynctest.Run(t, newFile) }

// The scenarios through a prefixed store: the store sees only its prefix.
func TestScenariosPrefixed(t *testing.T) {
	dirsynctest.Run(t, func(t *testing.T) blob.Store {
		s, err := blob.Prefix(mem.New(nil), "team/alice")
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestSkippedWithReasons(t *testing.T) {
	s := mem.New(nil)
	m := dirsynctest.NewMachine(t, "a")
	m.Write(t, map[string]string{
		"ok.md":               "fine",
		"big.md":              strings.Repeat("x", 101),
		".cloudmem/crypt-key": "k",
		"sub/.cloudmem-lock":  "l",
		"bad\x01name.md":      "c",
		"linked/target.md":    "t",
	})
	if err := os.Symlink("target.md", filepath.Join(m.Dir, "linked", "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(m.Dir, "linked"), filepath.Join(m.Dir, "dirlink")); err != nil {
		t.Fatal(err)
	}
	opts := m.Options()
	opts.MaxFileBytes = 100
	rep, err := dirsync.Sync(t.Context(), m.Dir, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []dirsync.Problem{
		{".cloudmem/crypt-key", "is not a valid memory path: Path /memories/.cloudmem/crypt-key is reserved"},
		{"bad\x01name.md", "is not a valid memory path: Path /memories/bad\x01name.md contains invalid characters"},
		{"big.md", "is 101 bytes, over the limit of 100 bytes per memory file"},
		{"dirlink", "is a symbolic link (links are not followed)"},
		{"linked/link.md", "is a symbolic link (links are not followed)"},
		{"sub/.cloudmem-lock", "is not a valid memory path: Path /memories/sub/.cloudmem-lock is reserved"},
	}
	got := slices.SortedFunc(slices.Values(rep.Skipped), func(a, b dirsync.Problem) int { return strings.Compare(a.Key, b.Key) })
	if !slices.Equal(got, want) {
		t.Errorf("skipped:\n got %q\nwant %q", got, want)
	}
	dirsynctest.Expect(t, "the store", dirsynctest.StoreTree(t, s), map[string]string{"ok.md": "fine", "linked/target.md": "t"})
}

// TestStoreFullSkipsNewFiles: new files past the file limit, set in
// Options or carried by the store (a URL's max_files), are skipped.
func TestStoreFullSkipsNewFiles(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store blob.Store
		limit int
	}{
		{"options", mem.New(nil), 2},
		{"store", blob.WithLimits(mem.New(nil), blob.Limits{MaxFiles: 2}), 0},
	} {
		m := dirsynctest.NewMachine(t, "a")
		m.Write(t, map[string]string{"a.md": "1", "b.md": "2", "c.md": "3"})
		opts := m.Options()
		opts.MaxFiles = tc.limit
		rep, err := dirsync.Sync(t.Context(), m.Dir, tc.store, opts)
		if err != nil {
			t.Fatal(err)
		}
		if want := []dirsync.Problem{{"c.md", "not uploaded: The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first."}}; !slices.Equal(rep.Skipped, want) {
			t.Errorf("%s: skipped %q, want %q", tc.name, rep.Skipped, want)
		}
		dirsynctest.Expect(t, "the store", dirsynctest.StoreTree(t, tc.store), map[string]string{"a.md": "1", "b.md": "2"})
		// The uploads went through the write gate, so the file count is
		// exact: the model's next create is refused too.
		h, err := memory.New(tc.store, memory.Options{MaxFiles: 2})
		if err != nil {
			t.Fatal(err)
		}
		res := h.Create(t.Context(), "/memories/d.md", "4")
		if want := "Error: The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first."; res.Text != want {
			t.Errorf("%s: a create after the sync: %q, want %q", tc.name, res.Text, want)
		}
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	s := mem.New(nil)
	a, b := dirsynctest.NewMachine(t, "a"), dirsynctest.NewMachine(t, "b")
	a.Write(t, map[string]string{"x.md": "x", "y.md": "y"})
	a.MustSync(t, s)
	b.Write(t, map[string]string{"z.md": "z"})
	opts := b.Options()
	opts.DryRun = true
	rep, err := dirsync.Sync(t.Context(), b.Dir, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []dirsync.Action{{dirsync.OpDownload, "x.md", ""}, {dirsync.OpDownload, "y.md", ""}, {dirsync.OpUpload, "z.md", ""}}
	if !slices.Equal(rep.Actions, want) {
		t.Errorf("planned %v, want %v", rep.Actions, want)
	}
	if got, want := rep.Summary(), "sync (dry run, nothing changed): 3 files, 1 uploaded, 2 downloaded, 0 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed"; got != want {
		t.Errorf("summary:\n got %s\nwant %s", got, want)
	}
	dirsynctest.Expect(t, "b's folder", b.Tree(t), map[string]string{"z.md": "z"})
	dirsynctest.Expect(t, "the store", dirsynctest.StoreTree(t, s), map[string]string{"x.md": "x", "y.md": "y"})
	if _, err := os.Stat(b.State); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run wrote the state file (stat: %v)", err)
	}
}

func TestDeleteGrace(t *testing.T) {
	s := mem.New(nil)
	a := dirsynctest.NewMachine(t, "a")
	a.Write(t, map[string]string{"x.md": "x"})
	a.MustSync(t, s)
	a.Remove(t, "x.md")

	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	opts := a.Options()
	opts.DeleteGrace = time.Minute
	opts = dirsync.WithClock(opts, func() time.Time { return clock })
	for _, step := range []struct {
		after time.Duration
		want  dirsync.Op
		store map[string]string
	}{
		{0, dirsync.OpDeferred, map[string]string{"x.md": "x"}},
		{59 * time.Second, dirsync.OpDeferred, map[string]string{"x.md": "x"}},
		{time.Second, dirsync.OpDeleteRemote, map[string]string{}},
	} {
		clock = clock.Add(step.after)
		rep, err := dirsync.Sync(t.Context(), a.Dir, s, opts)
		if err != nil {
			t.Fatal(err)
		}
		if want := []dirsync.Action{{step.want, "x.md", ""}}; !slices.Equal(rep.Actions, want) {
			t.Errorf("at +%v: %v, want %v", step.after, rep.Actions, want)
		}
		dirsynctest.Expect(t, "the store", dirsynctest.StoreTree(t, s), step.store)
	}
}

// A delete held back by the grace period is cancelled when the file comes
// back.
func TestDeleteGraceCancelled(t *testing.T) {
	s := mem.New(nil)
	a := dirsynctest.NewMachine(t, "a")
	a.Write(t, map[string]string{"x.md": "x"})
	a.MustSync(t, s)
	clock := time.Now()
	opts := a.Options()
	opts.DeleteGrace = time.Minute
	opts = dirsync.WithClock(opts, func() time.Time { return clock })
	a.Remove(t, "x.md")
	if _, err := dirsync.Sync(t.Context(), a.Dir, s, opts); err != nil {
		t.Fatal(err)
	}
	a.Write(t, map[string]string{"x.md": "x"}) // back, as it was
	clock = clock.Add(2 * time.Minute)
	if _, err := dirsync.Sync(t.Context(), a.Dir, s, opts); err != nil {
		t.Fatal(err)
	}
	a.Remove(t, "x.md")
	clock = clock.Add(time.Second)
	rep, err := dirsync.Sync(t.Context(), a.Dir, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []dirsync.Action{{dirsync.OpDeferred, "x.md", ""}}; !slices.Equal(rep.Actions, want) {
		t.Errorf("a new delete after the file came back: %v, want %v (the old sighting must not count)", rep.Actions, want)
	}
}

func TestBusy(t *testing.T) {
	m := dirsynctest.NewMachine(t, "a")
	unlock, err := dirsync.LockState(m.State)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dirsync.Sync(t.Context(), m.Dir, mem.New(nil), m.Options())
	if !errors.Is(err, dirsync.ErrBusy) {
		t.Fatalf("a second pass: err = %v, want dirsync.ErrBusy", err)
	}
	unlock()
	if _, err := dirsync.Sync(t.Context(), m.Dir, mem.New(nil), m.Options()); err != nil {
		t.Fatalf("after the first pass ended: %v", err)
	}
}

func TestCorruptState(t *testing.T) {
	m := dirsynctest.NewMachine(t, "a")
	if err := os.MkdirAll(filepath.Dir(m.State), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m.State, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.Write(t, map[string]string{"x.md": "x"})
	s := mem.New(nil)
	_, err := dirsync.Sync(t.Context(), m.Dir, s, m.Options())
	if err == nil || !strings.Contains(err.Error(), "is corrupt (delete it to start over") {
		t.Fatalf("err = %v, want the corrupt-state error", err)
	}
	dirsynctest.Expect(t, "the store", dirsynctest.StoreTree(t, s), map[string]string{})
}

// TestLocalCrashAtEveryStep interrupts a pass at every change it makes to
// the folder in turn (that change and every later one fail), then runs
// again: the machines converge and no content is lost.
func TestLocalCrashAtEveryStep(t *testing.T) {
	for n := 1; ; n++ {
		s := mem.New(nil)
		a, b := dirsynctest.NewMachine(t, "a"), dirsynctest.NewMachine(t, "b")
		a.Write(t, map[string]string{"down.md": "d0", "del.md": "x", "both.md": "b0"})
		a.MustSync(t, s)
		b.MustSync(t, s)
		b.Write(t, map[string]string{"down.md": "d1 from b", "both.md": "b1 from b"})
		b.Remove(t, "del.md")
		b.MustSync(t, s)
		a.Write(t, map[string]string{"both.md": "b1 from a"})

		changes := 0
		_, err := dirsync.SyncWithLocalFault(t.Context(), a.Dir, s, a.Options(), func(op, key string) error {
			changes++
			if changes >= n {
				return fmt.Errorf("injected crash at %s %s", op, key)
			}
			return nil
		})
		crashed := changes >= n
		if crashed && err == nil {
			t.Fatalf("crash at change %d: the pass reported success", n)
		}
		for range 2 {
			for _, m := range []*dirsynctest.Machine{a, b} {
				if _, err := m.Sync(t, s); err != nil && !errors.Is(err, dirsync.ErrConflict) {
					t.Fatalf("crash at change %d, then %s: %v", n, m.Name, err)
				}
			}
		}
		ta := a.Tree(t)
		dirsynctest.Expect(t, fmt.Sprintf("crash at change %d: b's folder against a's", n), b.Tree(t), ta)
		dirsynctest.Expect(t, fmt.Sprintf("crash at change %d: the store against a's folder", n), dirsynctest.StoreTree(t, s), ta)
		if got, want := slices.Sorted(maps.Values(ta)), []string{"b1 from a", "b1 from b", "d1 from b"}; !slices.Equal(got, want) {
			t.Fatalf("crash at change %d: the folders hold %q, want %q", n, got, want)
		}
		if !crashed {
			if n < 4 {
				t.Fatalf("the pass made only %d local changes", n-1)
			}
			return
		}
	}
}

// A local edit made while a pass runs is never overwritten by a download.
func TestLocalEditDuringPassIsKept(t *testing.T) {
	s := mem.New(nil)
	a, b := dirsynctest.NewMachine(t, "a"), dirsynctest.NewMachine(t, "b")
	a.Write(t, map[string]string{"x.md": "0"})
	a.MustSync(t, s)
	b.MustSync(t, s)
	b.Write(t, map[string]string{"x.md": "from b"})
	b.MustSync(t, s)

	rep, err := dirsync.SyncWithLocalFault(t.Context(), a.Dir, s, a.Options(), func(op, key string) error {
		if op == "write" && key == "x.md" { // the user saves just before the download lands
			a.Write(t, map[string]string{"x.md": "edited on a meanwhile"})
		}
		return nil
	})
	if !errors.Is(err, dirsync.ErrFailed) || len(rep.Failed) != 1 {
		t.Fatalf("err = %v, failed %v; want one failure for x.md", err, rep.Failed)
	}
	if got, want := rep.Failed[0], (dirsync.Problem{"x.md", "writing the local file: changed locally while the sync ran"}); got != want {
		t.Errorf("failure %q, want %q", got, want)
	}
	dirsynctest.Expect(t, "a's folder", a.Tree(t), map[string]string{"x.md": "edited on a meanwhile"})
	// The next pass sees both sides changed: a conflict that keeps both.
	if _, err := a.Sync(t, s); !errors.Is(err, dirsync.ErrConflict) {
		t.Fatalf("next pass: %v, want dirsync.ErrConflict", err)
	}
	got := slices.Sorted(maps.Values(a.Tree(t)))
	if want := []string{"edited on a meanwhile", "from b"}; !slices.Equal(got, want) {
		t.Errorf("a's folder holds %q, want %q", got, want)
	}
}

// A long first pass reports its progress every 100 files, and at the end.
func TestProgress(t *testing.T) {
	m := dirsynctest.NewMachine(t, "a")
	files := map[string]string{}
	for i := range 250 {
		files[fmt.Sprintf("f%03d.md", i)] = fmt.Sprint(i)
	}
	m.Write(t, files)
	var calls [][2]int
	opts := m.Options()
	opts.Progress = func(done, total int) { calls = append(calls, [2]int{done, total}) }
	if _, err := dirsync.Sync(t.Context(), m.Dir, mem.New(nil), opts); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, 250}, {100, 250}, {200, 250}, {250, 250}}; !slices.Equal(calls, want) {
		t.Errorf("progress calls %v, want %v", calls, want)
	}
}

// TestUploadOntoStoreDirectory: a local file whose name is a directory in
// the store is skipped with that reason (before the write gate it was put
// beside the directory, making the name both), on every pass, and the
// store keeps its file.
func TestUploadOntoStoreDirectory(t *testing.T) {
	ctx := t.Context()
	s := mem.New(nil)
	if _, err := s.Put(ctx, "a/x.md", []byte("x"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	m := dirsynctest.NewMachine(t, "m")
	m.Write(t, map[string]string{"a": "local"})
	for pass := range 2 {
		rep, _ := dirsync.Sync(ctx, m.Dir, s, m.Options()) // a/x.md cannot be written under the local file a
		want := dirsync.Problem{Key: "a", Reason: "not uploaded: the store has a directory of this name"}
		if !slices.Contains(rep.Skipped, want) {
			t.Errorf("pass %d: skipped %q, want it to hold %q", pass, rep.Skipped, want)
		}
		dirsynctest.Expect(t, "the store", dirsynctest.StoreTree(t, s), map[string]string{"a/x.md": "x"})
	}
}
