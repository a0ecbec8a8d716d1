package crypt_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/crypt"
)

// The encrypting store hands on what needs no plaintext and keeps keys as
// they are; it keeps back what would move or copy ciphertext bound to its
// key (see the package documentation).
func TestForwarding(t *testing.T) {
	cfg := newConfig(t, crypt.GenerateIdentity)
	bound := "each object's ciphertext is bound to its key, so a move or copy re-encrypts through the store"
	blobtest.Forwarding(t, func(*testing.T) blob.Store { return mem.New(nil) },
		func(t *testing.T, s blob.Store) blob.Store { return mustWrap(t, s, cfg) },
		blobtest.ForwardingOptions{Unforwarded: map[string]string{blobtest.CapRename: bound, blobtest.CapCopy: bound},
			Traits: func(in blob.Traits) blob.Traits { in.Encrypted = true; return in }})
}
