package dirsync_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/dirsync"
	"github.com/cloudmem/cloudmem/dirsync/dirsynctest"
)

// eventually polls cond until it holds or 20 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s did not happen within 20 s", what)
}

func TestWatchPicksUpLocalAndRemoteChanges(t *testing.T) {
	s := mem.New(nil)
	a, b := dirsynctest.NewMachine(t, "a"), dirsynctest.NewMachine(t, "b")
	ctx, cancel := context.WithCancel(t.Context())
	var (
		mu     sync.Mutex
		passes int
		errs   []error
	)
	done := make(chan error, 1)
	go func() {
		done <- dirsync.Watch(ctx, a.Dir, s, a.Options(), dirsync.WatchOptions{
			Interval: 200 * time.Millisecond,
			Debounce: 20 * time.Millisecond,
			AfterPass: func(_ dirsync.Report, err error) {
				mu.Lock()
				defer mu.Unlock()
				passes++
				if err != nil {
					errs = append(errs, err)
				}
			},
		})
	}()
	started := func() bool { mu.Lock(); defer mu.Unlock(); return passes > 0 }
	eventually(t, "the first pass", started)

	// A local edit, in a new subdirectory, reaches the store.
	a.Write(t, map[string]string{"notes/new.md": "written on a"})
	eventually(t, "the local edit reaching the store", func() bool {
		return dirsynctest.StoreTree(t, s)["notes/new.md"] == "written on a"
	})
	// A change another machine makes reaches the folder.
	b.MustSync(t, s)
	b.Write(t, map[string]string{"notes/new.md": "edited on b", "from-b.md": "b"})
	b.MustSync(t, s)
	eventually(t, "the remote change reaching the folder", func() bool {
		tree := a.Tree(t)
		return tree["notes/new.md"] == "edited on b" && tree["from-b.md"] == "b"
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Watch returned %v after its context was cancelled, want nil", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) > 0 {
		t.Errorf("passes failed: %v", errs)
	}
}

func TestWatchRefusesDryRun(t *testing.T) {
	a := dirsynctest.NewMachine(t, "a")
	opts := a.Options()
	opts.DryRun = true
	err := dirsync.Watch(t.Context(), a.Dir, mem.New(nil), opts, dirsync.WatchOptions{})
	if err == nil || err.Error() != "dirsync: Watch does not take DryRun; run Sync for a dry run" {
		t.Fatalf("err = %v", err)
	}
}
