package dirsync_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/dirsync"
)

type syncClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *syncClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *syncClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Sync sees an expired file as a file deleted in the store: it downloads
// none, and a copy synced before is deleted here.
func TestSyncExpired(t *testing.T) {
	ctx := t.Context()
	clock := &syncClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s := blob.WithExpiry(mem.New(&mem.Options{Now: clock.Now}), blob.Expiry{Now: clock.Now,
		After: func(key string) (time.Duration, bool) { return time.Hour, strings.HasPrefix(key, "scratch/") }})
	for _, k := range []string{"scratch/a.md", "keep.md"} {
		if _, err := s.Put(ctx, k, []byte(k), blob.Cond{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	opts := dirsync.Options{StateFile: filepath.Join(t.TempDir(), "state"), Machine: "m"}
	if _, err := dirsync.Sync(ctx, dir, s, opts); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Hour)
	rep, err := dirsync.Sync(ctx, dir, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []dirsync.Action{{Op: dirsync.OpDeleteLocal, Key: "scratch/a.md"}}
	if !slices.Equal(rep.Actions, want) {
		t.Errorf("actions %+v, want %+v", rep.Actions, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "scratch", "a.md")); !os.IsNotExist(err) {
		t.Errorf("the expired file's copy is still here: %v", err)
	}
	// A new folder gets no copy of it.
	fresh := t.TempDir()
	opts.StateFile = filepath.Join(t.TempDir(), "state")
	rep, err = dirsync.Sync(ctx, fresh, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []dirsync.Action{{Op: dirsync.OpDownload, Key: "keep.md"}}; !slices.Equal(rep.Actions, want) {
		t.Errorf("a new folder: %+v, want %+v", rep.Actions, want)
	}
}
