package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newRedactCmd) }

// newRedactCmd is "cloudmem redact PATH@VERSION".
func newRedactCmd(a *app) *cobra.Command {
	var actor string
	cmd := &cobra.Command{
		Use:   "redact PATH@VERSION",
		Short: "Erase the content of an old version of a memory file, keeping its record",
		Long: "Erases the content of version VERSION of the memory file PATH, and of every other version\n" +
			"of the file with the same content, from the store; the records stay, marked redacted with\n" +
			"who and when. The file's current content cannot be redacted: change or delete it first.",
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
			vs, err := hs.Redact(a.withActor(cmd.Context(), actor), key, id)
			if err != nil {
				return err
			}
			for _, v := range vs {
				fmt.Fprintf(a.stdout, "Redacted version %s of %s.\n", v.ID, memory.PathOf(v.Path))
			}
			return nil
		},
	}
	addActorFlag(cmd, &actor)
	return cmd
}
