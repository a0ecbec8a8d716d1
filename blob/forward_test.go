package blob_test

import (
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

func newMem(*testing.T) blob.Store { return mem.New(nil) }

// Every wrapper of this package hands every capability of the store it
// wraps on (blobtest.Forwarding), or says why not.
func TestWrappersForward(t *testing.T) {
	writes := "a read-only store refuses writes before they reach the inner store"
	for _, w := range []struct {
		name string
		wrap func(t *testing.T, s blob.Store) blob.Store
		opts blobtest.ForwardingOptions
	}{
		{"forward", func(_ *testing.T, s blob.Store) blob.Store { return blob.Forward{Inner: s} }, blobtest.ForwardingOptions{}},
		{"counter", func(_ *testing.T, s blob.Store) blob.Store { return blob.NewCounter(s) }, blobtest.ForwardingOptions{}},
		{"timeout", func(_ *testing.T, s blob.Store) blob.Store { return blob.WithTimeout(s, time.Minute) }, blobtest.ForwardingOptions{}},
		{"refuse encrypted", func(_ *testing.T, s blob.Store) blob.Store { return blob.RefuseEncrypted(s) }, blobtest.ForwardingOptions{}},
		{"limits", func(_ *testing.T, s blob.Store) blob.Store {
			return blob.WithLimits(s, blob.Limits{MaxFiles: 3})
		}, blobtest.ForwardingOptions{Traits: func(in blob.Traits) blob.Traits {
			in.Limits.MaxFiles = 3
			return in
		}}},
		{"policy", func(_ *testing.T, s blob.Store) blob.Store { return blob.WithPolicy(s, "this store's policy") },
			blobtest.ForwardingOptions{Traits: func(in blob.Traits) blob.Traits {
				in.Policy = "this store's policy"
				return in
			}}},
		{"expiry", func(_ *testing.T, s blob.Store) blob.Store { return blob.WithExpiry(s, neverYet) },
			blobtest.ForwardingOptions{Traits: func(in blob.Traits) blob.Traits {
				in.Expires = true
				return in
			}}},
		{"prefix", func(t *testing.T, s blob.Store) blob.Store {
			p, err := blob.Prefix(s, "tenant/a")
			if err != nil {
				t.Fatal(err)
			}
			return p
		}, blobtest.ForwardingOptions{Traits: func(in blob.Traits) blob.Traits {
			in.KeyBudget -= len("tenant/a/")
			return in
		}}},
		{"read-only", func(_ *testing.T, s blob.Store) blob.Store { return blob.ReadOnly(s) }, blobtest.ForwardingOptions{
			Traits: func(in blob.Traits) blob.Traits { in.ReadOnly = true; return in },
			Unforwarded: map[string]string{blobtest.CapRename: writes, blobtest.CapDeleteTree: writes, blobtest.CapCopy: writes,
				blobtest.CapDeleteBatch: writes},
		}},
	} {
		t.Run(w.name, func(t *testing.T) { blobtest.Forwarding(t, newMem, w.wrap, w.opts) })
	}
}
