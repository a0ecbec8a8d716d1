package crypt

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

type closingStore struct {
	blob.Store
	closed int
}

func (c *closingStore) Close() error { c.closed++; return nil }

// TestCloseForwarded checks that wrapping a store that holds a client (a
// Redis pool, an HTTP client) does not leak it: Close reaches the inner store.
func TestCloseForwarded(t *testing.T) {
	k := newX25519Key(t)
	inner := &closingStore{Store: mem.New(nil)}
	s := wrap(t, inner, config([]testKey{k}, k))
	if err := blob.Close(s); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if inner.closed != 1 {
		t.Fatalf("inner closed %d times, want 1", inner.closed)
	}
	if err := blob.Close(wrap(t, mem.New(nil), config([]testKey{k}, k))); err != nil {
		t.Fatalf("Close over a store with nothing to close = %v", err)
	}
}
