package main

import (
	"context"
	"fmt"

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
		func(ctx context.Context, hs *history.Store, _ blob.Store, key, id string, dryRun bool) error {
			vs, err := hs.Redact(ctx, key, id)
			if err != nil {
				return historyWriteError(err, "redact rewrites versions in its history")
			}
			for _, v := range vs {
				if dryRun {
					fmt.Fprintf(a.stdout, "would redact version %s of %s\n", v.ID, memory.PathOf(v.Path))
				} else {
					fmt.Fprintf(a.stdout, "Redacted version %s of %s.\n", v.ID, memory.PathOf(v.Path))
				}
			}
			return nil
		})
}
