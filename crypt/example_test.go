package crypt_test

import (
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
)

// An application key, which the program reads with, and an offline escrow
// key, which only receives: both can decrypt every object.
func Example() {
	ctx := context.Background()
	appIdentity, appRecipient, err := crypt.GenerateIdentity()
	if err != nil {
		panic(err)
	}
	_, escrowRecipient, err := crypt.GenerateIdentity() // kept offline
	if err != nil {
		panic(err)
	}
	ids, err := crypt.ParseIdentities(appIdentity) // or LoadIdentities, IdentitiesFromEnv
	if err != nil {
		panic(err)
	}
	recipients, err := crypt.ParseRecipients(appRecipient, escrowRecipient)
	if err != nil {
		panic(err)
	}
	inner := mem.New(nil)
	s, err := crypt.Wrap(inner, crypt.Config{Recipients: recipients, Identities: ids})
	if err != nil {
		panic(err)
	}

	if _, err := s.Put(ctx, "notes/prefs.md", []byte("Answer in French.\n"), blob.Cond{}); err != nil {
		panic(err)
	}
	data, info, err := s.Get(ctx, "notes/prefs.md", blob.MaxObjectBytes)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q, %d bytes\n", data, info.Size)

	stored, _, err := inner.Get(ctx, "notes/prefs.md", blob.MaxObjectBytes)
	if err != nil {
		panic(err)
	}
	fmt.Printf("stored: %d bytes starting %q\n", len(stored), stored[:15])
	// Output:
	// "Answer in French.\n", 18 bytes
	// stored: 1139 bytes starting "cloudmem-age/v1"
}
