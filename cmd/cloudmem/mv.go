package main

import (
	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newMvCmd) }

// newMvCmd is "cloudmem mv OLD NEW": the handler's rename command, for a
// file or a whole directory. NEW must not exist.
func newMvCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "mv OLD NEW",
		Short: "Rename a memory file or directory",
		Long:  "Renames the memory file or directory OLD to NEW, which must not exist.",
		Args:  positional("OLD", "NEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, done, err := a.openHandler(cmd.Context(), readWrite, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			return a.printResult(h.Rename(cmd.Context(), args[0], args[1]))
		},
	}
}
