package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newRestoreCmd) }

// newRestoreCmd is "cloudmem restore PATH@VERSION".
func newRestoreCmd(a *app) *cobra.Command {
	return newRefCmd(a, "restore",
		"Write an old version of a memory file back, as a new version",
		"Writes the content of version VERSION of the memory file PATH back to PATH, as a new\n"+
			"version of its own. The write is conditional: if the file changes meanwhile, nothing is\n"+
			"restored. A deleted file is created again.",
		func(ctx context.Context, hs *history.Store, write blob.Store, key, id string, dryRun bool) error {
			// The restore writes through a handler over write (the whole
			// store: the URL's write policy, read-only and limits layers
			// above hs), so that the tree's rules (the file limit, files
			// and directories apart, the policy) hold for it as for any
			// create, and hs records it.
			h, err := a.handler(write, memory.Options{})
			if err != nil {
				return err
			}
			v, err := hs.Restore(ctx, key, id, func(ctx context.Context, key string, data []byte, ifVersion string) error {
				_, err := h.Write(ctx, memory.PathOf(key), data, ifVersion)
				return err
			})
			switch {
			case err != nil:
				return err
			case dryRun:
				_, err = fmt.Fprintf(a.stdout, "would restore %s to version %s\n", memory.PathOf(key), id)
				return err
			}
			fmt.Fprintf(a.stdout, "Restored %s to version %s: new version %s.\n", memory.PathOf(key), id, v.ID)
			return nil
		})
}

// newRefCmd is a history command that changes one version, "cloudmem NAME
// PATH@VERSION [--actor NAME]" (restore, redact): it resolves the
// reference, opens the store's history for writing, and calls run with the
// file's key and the version's id, under a context that carries the actor;
// run prints what was done, or with dryRun (--dry-run: the store is opened
// under blob.DryRun, so run does everything and changes nothing) what
// would be done.
func newRefCmd(a *app, name, short, long string, run func(ctx context.Context, hs *history.Store, write blob.Store, key, id string, dryRun bool) error) *cobra.Command {
	var actor string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   name + " [--dry-run] PATH@VERSION",
		Short: short,
		Long: long + "\nA VERSION may be a unique prefix of at least 4 digits. --dry-run prints what would be\n" +
			"done and changes nothing.",
		Args: positional("PATH@VERSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, id, err := resolveRef(args[0])
			if err != nil {
				return err
			}
			acc := readWrite
			if dryRun {
				acc = dryRunAccess
			}
			hs, write, done, err := a.openHistory(cmd.Context(), acc)
			if err != nil {
				return err
			}
			defer done()
			if id, err = resolveVersion(cmd.Context(), hs, key, id); err != nil {
				return err
			}
			return run(a.withActor(cmd.Context(), actor), hs, write, key, id, dryRun)
		},
	}
	addActorFlag(cmd, &actor)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be done and change nothing")
	return cmd
}
