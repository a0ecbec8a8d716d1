package blob_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

// neverYet makes every key but reserved ones expire, a century after its
// last change: the contract holds as for the store beneath.
var neverYet = blob.Expiry{After: func(string) (time.Duration, bool) { return 100 * 365 * 24 * time.Hour, true }}

func TestExpiryConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.WithExpiry(mem.New(nil), neverYet) })
}

// clock is a test clock, safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// expiringMem is a mem store whose keys under "tmp/" expire an hour after
// their last change, by c, beneath a store that records the actors of its
// deletions.
func expiringMem(c *clock) (s, raw blob.Store, deleted *actors) {
	raw = mem.New(&mem.Options{Now: c.Now})
	deleted = &actors{Forward: blob.Forward{Inner: raw}}
	return blob.WithExpiry(deleted, blob.Expiry{Now: c.Now, After: tmpHour}), raw, deleted
}

func tmpHour(key string) (time.Duration, bool) { return time.Hour, strings.HasPrefix(key, "tmp/") }

// actors records the actor of each successful Delete.
type actors struct {
	blob.Forward
	mu  sync.Mutex
	log []string // "key actor"
}

func (a *actors) Delete(ctx context.Context, key string, c blob.Cond) error {
	err := a.Forward.Delete(ctx, key, c)
	if err == nil {
		a.mu.Lock()
		a.log = append(a.log, key+" "+blob.Actor(ctx))
		a.mu.Unlock()
	}
	return err
}

func TestExpiryStore(t *testing.T) {
	ctx := t.Context()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, raw, deleted := expiringMem(c)
	for _, k := range []string{"tmp/a", "tmp/b", "tmp/c", "tmp/d", "keep"} {
		if _, err := s.Put(ctx, k, []byte(k), blob.Cond{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
	c.Add(time.Hour - 1)
	if keys := listKeys(t, s); !slices.Equal(keys, []string{"keep", "tmp/a", "tmp/b", "tmp/c", "tmp/d"}) {
		t.Fatalf("a nanosecond before: %q", keys)
	}
	c.Add(1)
	if keys := listKeys(t, s); !slices.Equal(keys, []string{"keep"}) {
		t.Errorf("List at the instant: %q", keys)
	}
	if _, _, err := s.Get(ctx, "tmp/a", 100); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Get: %v", err)
	}
	if _, _, err := s.Get(ctx, "tmp/a", 1); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Get over the limit: %v", err)
	}
	if _, err := s.Stat(ctx, "tmp/a"); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Stat: %v", err)
	}
	// Reads delete nothing.
	if keys := listKeys(t, raw); len(keys) != 5 {
		t.Fatalf("the store beneath: %q", keys)
	}
	// A create over it deletes it, then writes.
	if _, err := s.Put(ctx, "tmp/a", []byte("new"), blob.Cond{IfAbsent: true}); err != nil {
		t.Errorf("Put IfAbsent over it: %v", err)
	}
	// A delete deletes it and answers that it does not exist.
	if err := s.Delete(ctx, "tmp/b", blob.Cond{}); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Delete: %v", err)
	}
	// A rename of it moves nothing (blob.Rename finds no source: reads
	// delete nothing); a rename onto it replaces it.
	if err := blob.Rename(ctx, s, "tmp/c", "moved"); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Rename from it: %v", err)
	}
	if err := s.(blob.Tree).Rename(ctx, "tmp/c", "moved"); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("the store's own Rename from it: %v", err) // deletes it
	}
	if err := blob.Rename(ctx, s, "keep", "tmp/d"); err != nil {
		t.Errorf("Rename onto it: %v", err)
	}
	if keys := listKeys(t, raw); !slices.Equal(keys, []string{"tmp/a", "tmp/d"}) {
		t.Errorf("the store beneath holds %q", keys)
	}
	want := []string{"tmp/a policy:expire", "tmp/b policy:expire", "tmp/c policy:expire", "tmp/d policy:expire"} // the rename onto tmp/d is atomic
	if !slices.Equal(deleted.log, want) {
		t.Errorf("deletions %q, want %q", deleted.log, want)
	}
	if !blob.TraitsOf(s).Expires || blob.TraitsOf(raw).Expires {
		t.Error("Traits.Expires")
	}
}

// A store that keeps names exclusive (the file store) refuses a key under
// an object, or an object over keys: a write that meets expired ones there
// deletes them.
func TestExpiryExclusiveNames(t *testing.T) {
	ctx := t.Context()
	fs, err := file.Open(ctx, t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now().Add(2 * time.Hour)} // every file written now is over an hour old
	s := blob.WithExpiry(fs, blob.Expiry{Now: c.Now, After: tmpHour})
	for _, k := range []string{"tmp/a", "tmp/d/x", "tmp/d/y"} {
		if _, err := fs.Put(ctx, k, []byte(k), blob.Cond{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, "tmp/a/b", []byte("under"), blob.Cond{IfAbsent: true}); err != nil {
		t.Errorf("a key under an expired object: %v", err)
	}
	c.Add(-3 * time.Hour) // every file is young
	if _, err := s.Put(ctx, "tmp/d", []byte("over"), blob.Cond{IfAbsent: true}); !errors.Is(err, blob.ErrPrecondition) {
		t.Errorf("an object over live keys: %v", err)
	}
	c.Add(3 * time.Hour)
	if _, err := s.Put(ctx, "tmp/d", []byte("over"), blob.Cond{IfAbsent: true}); err != nil {
		t.Errorf("an object over expired keys: %v", err)
	}
	if keys := listKeys(t, fs); !slices.Equal(keys, []string{"tmp/a/b", "tmp/d"}) {
		t.Errorf("the store holds %q", keys)
	}
}

func listKeys(t *testing.T, s blob.Store) []string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	return blob.Keys(infos)
}

// sweepRewriter rewrites a key just before the first Delete of it: a writer
// that changes the file between a sweep's listing and its delete.
type sweepRewriter struct {
	blob.Forward
	once sync.Once
}

func (r *sweepRewriter) Delete(ctx context.Context, key string, c blob.Cond) error {
	r.once.Do(func() { _, _ = r.Forward.Put(ctx, key, []byte("rewritten"), blob.Cond{}) })
	return r.Forward.Delete(ctx, key, c)
}

// A file rewritten between the sweep's listing and its delete stays: the
// delete is at the version listed.
func TestExpireConcurrentChangeWins(t *testing.T) {
	ctx := t.Context()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	raw := mem.New(&mem.Options{Now: c.Now})
	s := blob.WithExpiry(&sweepRewriter{Forward: blob.Forward{Inner: raw}}, blob.Expiry{Now: c.Now, After: tmpHour})
	for _, k := range []string{"tmp/a", "tmp/b"} {
		if _, err := s.Put(ctx, k, []byte("old"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	c.Add(time.Hour)
	var swept []string
	for info, err := range blob.Expire(ctx, s, false) {
		if err != nil {
			t.Fatal(err)
		}
		swept = append(swept, info.Key)
	}
	if !slices.Equal(swept, []string{"tmp/b"}) {
		t.Errorf("swept %q, want only tmp/b", swept)
	}
	if data, _, err := s.Get(ctx, "tmp/a", 100); string(data) != "rewritten" || err != nil {
		t.Errorf("tmp/a: %q, %v", data, err)
	}
}

// The calls WithExpiry adds (docs/guarantees.md, "Expiry"), counted
// beneath it.
func TestExpiryCalls(t *testing.T) {
	ctx := t.Context()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	n := blob.NewCounter(mem.New(&mem.Options{Now: c.Now}))
	s := blob.WithExpiry(n, blob.Expiry{Now: c.Now, After: tmpHour})
	for _, k := range []string{"tmp/old1", "tmp/old2", "tmp/old3", "keep"} {
		if _, err := n.Put(ctx, k, []byte("x"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	c.Add(time.Hour)
	for _, k := range []string{"tmp/live", "other"} {
		if _, err := n.Put(ctx, k, []byte("x"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		run  func() error
		want blob.Counts
	}{
		{"Get", func() error { _, _, err := s.Get(ctx, "tmp/live", 10); return err }, blob.Counts{Get: 1}},
		{"Stat", func() error { _, err := s.Stat(ctx, "tmp/live"); return err }, blob.Counts{Stat: 1}},
		{"List", func() error { _, err := blob.ListAll(ctx, s, ""); return err }, blob.Counts{List: 1}},
		{"create, no rule", func() error { _, err := s.Put(ctx, "new", nil, blob.Cond{IfAbsent: true}); return err }, blob.Counts{Put: 1}},
		{"create", func() error { _, err := s.Put(ctx, "tmp/new", nil, blob.Cond{IfAbsent: true}); return err }, blob.Counts{Put: 1}},
		{"create over a live file", func() error {
			if _, err := s.Put(ctx, "tmp/live", nil, blob.Cond{IfAbsent: true}); !errors.Is(err, blob.ErrPrecondition) {
				return err
			}
			return nil
		}, blob.Counts{Put: 1, Stat: 1}},
		{"create over an expired file", func() error { _, err := s.Put(ctx, "tmp/old1", nil, blob.Cond{IfAbsent: true}); return err },
			blob.Counts{Put: 2, Stat: 1, Delete: 1}},
		{"unconditional Put", func() error { _, err := s.Put(ctx, "tmp/live", nil, blob.Cond{}); return err }, blob.Counts{Stat: 1, Put: 1}},
		{"delete, no rule", func() error { return s.Delete(ctx, "other", blob.Cond{}) }, blob.Counts{Delete: 1}},
		{"delete", func() error { return s.Delete(ctx, "tmp/new", blob.Cond{}) }, blob.Counts{Stat: 1, Delete: 1}},
		{"delete of an expired file", func() error {
			if err := s.Delete(ctx, "tmp/old2", blob.Cond{}); !errors.Is(err, blob.ErrNotExist) {
				return err
			}
			return nil
		}, blob.Counts{Stat: 1, Delete: 1}},
		{"sweep", func() error {
			for _, err := range blob.Expire(ctx, s, false) {
				if err != nil {
					return err
				}
			}
			return nil
		}, blob.Counts{List: 1, Delete: 1}}, // tmp/old3
	} {
		n.Reset()
		if err := tc.run(); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if got := n.Counts(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// hider reports that its listings hide the keys under an object (as
// MinIO's do), without hiding them.
type hider struct{ blob.Forward }

func (h hider) Traits() blob.Traits {
	t := h.Forward.Traits()
	t.HidesUnderObjects = true
	return t
}

// On a store whose listings hide the keys under an object, a write under
// an expired object deletes it, so that it hides nothing.
func TestExpiryHidesUnderObjects(t *testing.T) {
	ctx := t.Context()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	raw := mem.New(&mem.Options{Now: c.Now})
	s := blob.WithExpiry(hider{blob.Forward{Inner: raw}}, blob.Expiry{Now: c.Now, After: tmpHour})
	if _, err := s.Put(ctx, "tmp/f", []byte("f"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	if _, err := s.Put(ctx, "tmp/f/y", []byte("y"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if keys := listKeys(t, raw); !slices.Equal(keys, []string{"tmp/f/y"}) {
		t.Errorf("the store holds %q", keys)
	}
}
