package crypt

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// lockingStore is a blob.Locker that records the keys it locked.
type lockingStore struct {
	blob.Store
	locked []string
}

func (l *lockingStore) Lock(_ context.Context, key string) (func(), error) {
	l.locked = append(l.locked, key)
	return func() {}, nil
}

// TestForwards checks the capabilities that pass keys through unchanged:
// Locker (but not for the key object) and the key budget.
func TestForwards(t *testing.T) {
	k := newX25519Key(t)
	inner := &lockingStore{Store: mem.New(nil)}
	s := wrap(t, inner, config([]testKey{k}, k))
	unlock, err := blob.Lock(t.Context(), s, "notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := blob.Lock(t.Context(), s, keyObject); !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("Lock of the key object: %v, want ErrInvalidKey", err)
	}
	if !slices.Equal(inner.locked, []string{"notes/a.md"}) {
		t.Fatalf("the inner store locked %q", inner.locked)
	}
	if _, err := s.(blob.Locker).Lock(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	plain := wrap(t, mem.New(nil), config([]testKey{k}, k))
	if _, err := plain.(blob.Locker).Lock(t.Context(), "a"); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Lock over a store without a Locker: %v, want ErrUnsupported", err)
	}

	p, err := blob.Prefix(mem.New(nil), "tenant")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := blob.KeyBytes(wrap(t, p, config([]testKey{k}, k))), blob.MaxKeyLen-len("tenant/"); got != want {
		t.Fatalf("KeyBytes through the wrapper = %d, want %d", got, want)
	}
	if m := blob.Mounts(s); m != nil {
		t.Fatalf("Mounts of a store over no mount table = %v", m)
	}
}
