package search_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// A file that expires (blob.WithExpiry) is not found from the instant it
// expires, though the index's MaxAge has not passed, whether the index
// listed it or re-read it after this process wrote it.
func TestExpiredFileNotFound(t *testing.T) {
	ctx := t.Context()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &testClock{t: t0}
	s := blob.WithExpiry(mem.New(&mem.Options{Now: clock.Now}), blob.Expiry{Now: clock.Now,
		After: func(key string) (time.Duration, bool) { return time.Hour, strings.HasPrefix(key, "scratch/") }})
	x := search.New(s, &search.Options{MaxAge: 24 * time.Hour})
	h, err := memory.New(s, memory.Options{Observer: x.Observer(nil)})
	if err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{"/memories/scratch/a.md": "deploy now", "/memories/keep.md": "deploy later"} {
		if res := h.Create(ctx, path, text); res.IsError {
			t.Fatal(res.Text)
		}
	}
	both := "Found 2 files for \"deploy\" in /memories:\n/memories/keep.md (line 1)\n     1\t«deploy» later\n/memories/scratch/a.md (line 1)\n     1\t«deploy» now"
	one := "Found 1 file for \"deploy\" in /memories:\n/memories/keep.md (line 1)\n     1\t«deploy» later"
	clock.Set(t0.Add(time.Hour - 1))
	check(t, x, []want{{search.Request{Query: "deploy"}, both}}) // listed
	clock.Set(t0.Add(time.Hour))
	check(t, x, []want{{search.Request{Query: "deploy"}, one}})
	// Written again by this process: re-read, not listed.
	if res := h.Create(ctx, "/memories/scratch/a.md", "deploy again"); res.IsError {
		t.Fatal(res.Text)
	}
	again := "Found 2 files for \"deploy\" in /memories:\n/memories/keep.md (line 1)\n     1\t«deploy» later\n/memories/scratch/a.md (line 1)\n     1\t«deploy» again"
	check(t, x, []want{{search.Request{Query: "deploy"}, again}})
	clock.Set(t0.Add(2 * time.Hour))
	check(t, x, []want{{search.Request{Query: "deploy"}, one}})
}
