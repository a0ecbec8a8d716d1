package transfer

import (
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

type expiryClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *expiryClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *expiryClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Export and Copy see no expired file; a copy into a store writes over an
// expired file there as over nothing.
func TestTransferExpired(t *testing.T) {
	ctx := t.Context()
	clock := &expiryClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	scratch := blob.Expiry{Now: clock.Now,
		After: func(key string) (time.Duration, bool) { return time.Hour, strings.HasPrefix(key, "scratch/") }}
	src := blob.WithExpiry(mem.New(&mem.Options{Now: clock.Now}), scratch)
	dstRaw := mem.New(&mem.Options{Now: clock.Now})
	dst := blob.WithExpiry(dstRaw, scratch)
	for _, put := range []struct {
		s         blob.Store
		key, data string
	}{{src, "scratch/a.md", "a"}, {src, "keep.md", "k"}, {dst, "scratch/b.md", "old b"}} {
		if _, err := put.s.Put(ctx, put.key, []byte(put.data), blob.Cond{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(time.Hour) // all three expire; what is written now lives
	if _, err := src.Put(ctx, "scratch/b.md", []byte("new b"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}

	w := &memWriter{files: map[string]string{}}
	if _, err := Export(ctx, src, w); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"keep.md": "k", "scratch/b.md": "new b"}; !maps.Equal(w.files, want) {
		t.Errorf("Export wrote %q, want %q", w.files, want)
	}
	stats, err := Copy(ctx, src, dst, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Copied != 2 {
		t.Errorf("Copy: %+v, want 2 copied", stats)
	}
	if got, want := storeFiles(t, dstRaw), map[string]string{"keep.md": "k", "scratch/b.md": "new b"}; !maps.Equal(got, want) {
		t.Errorf("the destination holds %q, want %q", got, want)
	}
}

// storeFiles reads every key of s but the bookkeeping.
func storeFiles(t *testing.T, s blob.Store) map[string]string {
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
