package blob_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// lockRecorder is a Locker that records the keys it locked and unlocked.
type lockRecorder struct {
	blob.Store
	events []string
}

func (l *lockRecorder) Lock(ctx context.Context, key string) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.events = append(l.events, "lock "+key)
	return func() { l.events = append(l.events, "unlock "+key) }, nil
}

// TestLock: the package function uses the store's Locker, through every
// wrapper of this package (the prefix maps the key), and falls back to a
// lock that holds nothing on a store without one.
func TestLock(t *testing.T) {
	ctx := t.Context()
	rec := &lockRecorder{Store: mem.New(nil)}
	p, err := blob.Prefix(rec, "team")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []blob.Store{rec, p, blob.ReadOnly(p), blob.NewCounter(p), blob.RefuseEncrypted(p)} {
		unlock, err := blob.Lock(ctx, s, "a.md")
		if err != nil {
			t.Fatalf("Lock through %T: %v", s, err)
		}
		unlock()
	}
	want := []string{"lock a.md", "unlock a.md"}
	for range 4 {
		want = append(want, "lock team/a.md", "unlock team/a.md")
	}
	if !slices.Equal(rec.events, want) {
		t.Fatalf("lock events:\n%q\nwant\n%q", rec.events, want)
	}

	for _, s := range []blob.Store{mem.New(nil), blob.NewCounter(mem.New(nil)), mustPrefix(t, mem.New(nil), "p")} {
		unlock, err := blob.Lock(ctx, s, "a.md")
		if err != nil {
			t.Fatalf("Lock on %T without a Locker: %v", s, err)
		}
		unlock()
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := blob.Lock(cancelled, mem.New(nil), "a.md"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a cancelled context: %v", err)
	}
	if _, err := blob.Lock(ctx, p, "../x"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("Lock of an invalid key through the prefix: %v", err)
	}
}
