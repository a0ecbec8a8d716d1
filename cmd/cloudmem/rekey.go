package main

import (
	"context"
	"fmt"
	"strings"

	"filippo.io/age"
	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/storeurl"
)

func init() { register(newRekeyCmd) }

// newRekeyCmd is "cloudmem rekey --to-recipients age1...,...": it
// re-encrypts every object of an encrypted store to a new recipient set
// with crypt.Rekey (one compare-and-swap per object, so a concurrent writer
// is never overwritten; objects already encrypted to the new set are
// skipped, so it can be run again after an interruption).
//
// The store is --store as usual. Its URL may hold encrypt=age or not:
// rekey works on the stored objects, so it opens the store without the
// encryption parameters, and takes the identity for reading from
// --identity-file (which may be repeated), else from the URL's
// age_identity_file, else from $CLOUDMEM_AGE_IDENTITY.
func newRekeyCmd(a *app) *cobra.Command {
	var (
		to            string
		identityFiles []string
	)
	cmd := &cobra.Command{
		Use:   "rekey --to-recipients age1...,age1... [--identity-file FILE]...",
		Short: "Re-encrypt every object of a store to new age recipients",
		Long: "Re-encrypts every object of the encrypted store to the new recipients, one object at a time\n" +
			"with a compare-and-swap write, so that a concurrent writer is never overwritten. Objects\n" +
			"already encrypted to the new recipients are skipped: after an interruption, run it again.\n" +
			"The store URL may carry encrypt=age or not. The objects are read with the identities of\n" +
			"--identity-file, else of the URL's age_identity_file, else of $" + crypt.EnvIdentity + ";\n" +
			"give the new identity too, so that readers holding only the new key trust the store's key\n" +
			"(otherwise they must pin its fingerprint) and so that a rekey that leaves the old key out\n" +
			"can be resumed.\n" +
			"Afterwards, open the store with the new keys (age_recipients, age_identity_file).",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return usageErrorf("no --to-recipients given")
			}
			recipients, err := crypt.ParseRecipients(strings.Split(to, ",")...)
			if err != nil {
				return usageErrorf("--to-recipients: %w", err)
			}
			return a.rekey(cmd.Context(), recipients, identityFiles)
		},
	}
	cmd.Flags().StringVar(&to, "to-recipients", "", "the new recipients: comma-separated age public keys `age1...,age1...` (required)")
	cmd.Flags().StringArrayVar(&identityFiles, "identity-file", nil, "an age identity `FILE` that reads the store's objects (may be repeated)")
	return cmd
}

func (a *app) rekey(ctx context.Context, recipients []age.Recipient, identityFiles []string) error {
	if len(a.mounts) > 0 { // each mount has its own keys: rekey one store at a time
		return usageErrorf("rekey works on one store: give it with --store, not --mount")
	}
	inner, keys, err := crypt.PlainURL(a.storeURL())
	if err != nil {
		return err
	}
	if len(identityFiles) == 0 && keys.IdentityFile != "" {
		identityFiles = []string{keys.IdentityFile}
	}
	ids, err := a.identities(identityFiles)
	if err != nil {
		return err
	}
	if err := checkBarePath(inner); err != nil {
		return err
	}
	opened, err := storeurl.Open(ctx, inner)
	if err != nil {
		return err
	}
	defer blob.Close(opened)
	// Rekey works on the ciphertext itself, beneath the guard that refuses
	// plain access to an encrypted store.
	store := blob.Unguarded(opened)

	p := a.progress()
	total := 0
	err = crypt.Rekey(ctx, store, crypt.Config{Identities: ids, KeyFingerprint: keys.KeyFingerprint}, crypt.Config{Recipients: recipients},
		func(done, n int) {
			total = n
			p.show(done == n, "rekey: %d/%d objects", done, n)
		})
	p.end()
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "rekey done: %s, each encrypted to %s\n",
		plural(total, "object"), plural(len(recipients), "recipient"))
	return nil
}

// identities loads the identities of files, or when there are none those
// of $CLOUDMEM_AGE_IDENTITY.
func (a *app) identities(files []string) ([]age.Identity, error) {
	var ids []age.Identity
	for _, name := range files {
		more, err := crypt.LoadIdentities(name)
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	if len(ids) > 0 {
		return ids, nil
	}
	text := a.getenv(crypt.EnvIdentity)
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("no identity to read the store with: give --identity-file FILE, "+
			"age_identity_file in the store URL, or set $%s", crypt.EnvIdentity)
	}
	ids, err := crypt.ParseIdentities(text)
	if err != nil {
		return nil, fmt.Errorf("%w (in $%s)", err, crypt.EnvIdentity)
	}
	return ids, nil
}
