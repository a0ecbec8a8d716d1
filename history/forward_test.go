package history_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

// The history Store hands on what records nothing (locks, Traits, Close)
// and keeps back what must be recorded key by key.
func TestForwarding(t *testing.T) {
	recorded := "each change gets its own record, so it is made key by key through the Store"
	blobtest.Forwarding(t, func(*testing.T) blob.Store { return mem.New(nil) },
		func(t *testing.T, s blob.Store) blob.Store { return wrap(t, s, nil) },
		blobtest.ForwardingOptions{Unforwarded: map[string]string{blobtest.CapRename: recorded, blobtest.CapDeleteTree: recorded,
			blobtest.CapCopy: recorded, blobtest.CapDeleteBatch: recorded},
			Traits: func(in blob.Traits) blob.Traits { in.RecordsWrites = true; return in }})
}
