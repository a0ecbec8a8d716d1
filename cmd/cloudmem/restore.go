package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newRestoreCmd) }

// newRestoreCmd is "cloudmem restore PATH@VERSION".
func newRestoreCmd(a *app) *cobra.Command {
	var actor string
	cmd := &cobra.Command{
		Use:   "restore PATH@VERSION",
		Short: "Write an old version of a memory file back, as a new version",
		Long: "Writes the content of version VERSION of the memory file PATH back to PATH, as a new\n" +
			"version of its own. The write is conditional: if the file changes meanwhile, nothing is\n" +
			"restored. A deleted file is created again.",
		Args: positional("PATH@VERSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, id, err := resolveRef(args[0])
			if err != nil {
				return err
			}
			hs, done, err := a.openHistory(cmd.Context(), readWrite)
			if err != nil {
				return err
			}
			defer done()
			v, err := hs.Restore(a.withActor(cmd.Context(), actor), key, id)
			if err != nil {
				return err
			}
			// A deleted file created again is written past the memory
			// handler: its next create counts the store again.
			if err := memory.ForgetFileCount(cmd.Context(), hs); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Restored %s to version %s: new version %s.\n", memory.PathOf(key), id, v.ID)
			return nil
		},
	}
	addActorFlag(cmd, &actor)
	return cmd
}
