package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newRedactCmd) }

// newRedactCmd is "cloudmem redact PATH@VERSION".
func newRedactCmd(a *app) *cobra.Command {
	return newRefCmd(a, "redact",
		"Erase the content of an old version of a memory file, keeping its record",
		"Erases the content of version VERSION of the memory file PATH, and of every other version\n"+
			"of the file with the same content, from the store; the records stay, marked redacted with\n"+
			"who and when. The file's current content cannot be redacted: change or delete it first.",
		func(ctx context.Context, hs *history.Store, key, id string, dryRun bool) error {
			if dryRun {
				return a.redactDryRun(ctx, hs, key, id)
			}
			vs, err := hs.Redact(ctx, key, id)
			if err != nil {
				return err
			}
			for _, v := range vs {
				fmt.Fprintf(a.stdout, "Redacted version %s of %s.\n", v.ID, memory.PathOf(v.Path))
			}
			return nil
		})
}

// redactDryRun prints the versions redact would erase (every version of
// the file's history with the content of version id) after the checks
// redact makes: a version with content, not the file's current content.
func (a *app) redactDryRun(ctx context.Context, hs *history.Store, key, id string) error {
	if _, _, err := hs.Show(ctx, key, id); err != nil {
		return err
	}
	vs, err := hs.History(ctx, key)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(vs, func(v history.Version) bool { return v.ID == id })
	if i < 0 {
		return fmt.Errorf("%w: %q in the history of %q", history.ErrUnknownVersion, id, key)
	}
	sum := vs[i].SHA256
	cur, _, err := hs.Get(ctx, key, blob.MaxObjectBytes)
	switch {
	case err == nil && contentSHA256(cur) == sum:
		return fmt.Errorf("%w: version %s of %q has the content the file holds now; change or delete the file first", history.ErrCurrentVersion, id, key)
	case err != nil && !errors.Is(err, blob.ErrNotExist):
		return err
	}
	for _, v := range vs {
		if v.Redacted == nil && v.SHA256 == sum && v.Op != history.OpDeleted {
			fmt.Fprintf(a.stdout, "would redact version %s of %s\n", v.ID, memory.PathOf(v.Path))
		}
	}
	return nil
}

// contentSHA256 is the hexadecimal SHA-256 of data, as history records it.
func contentSHA256(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
