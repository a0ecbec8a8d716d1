package blob_test

import (
	"errors"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// closer is a store that records whether it was closed.
type closer struct {
	blob.Store
	closed int
}

func (c *closer) Close() error {
	c.closed++
	return errClosed
}

var errClosed = errors.New("closed for the test")

// TestWrappersForwardClose checks that no wrapper swallows the Close of a
// store that holds resources, and that Close of a store without one is a no-op.
func TestWrappersForwardClose(t *testing.T) {
	wraps := map[string]func(blob.Store) blob.Store{
		"Prefix": func(s blob.Store) blob.Store {
			p, err := blob.Prefix(s, "p")
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
		"ReadOnly": blob.ReadOnly,
		"Counter":  func(s blob.Store) blob.Store { return blob.NewCounter(s) },
	}
	for name, wrap := range wraps {
		t.Run(name, func(t *testing.T) {
			inner := &closer{Store: mem.New(nil)}
			if err := blob.Close(wrap(inner)); !errors.Is(err, errClosed) {
				t.Fatalf("Close returned %v, want the inner store's error", err)
			}
			if inner.closed != 1 {
				t.Fatalf("inner store closed %d times, want 1", inner.closed)
			}
			if err := blob.Close(wrap(mem.New(nil))); err != nil {
				t.Fatalf("Close of a store with nothing to close returned %v", err)
			}
		})
	}
}
