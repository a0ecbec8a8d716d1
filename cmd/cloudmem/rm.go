package main

import (
	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newRmCmd) }

// newRmCmd is "cloudmem rm PATH": the handler's delete command, which
// removes a file, or a directory with everything beneath it.
func newRmCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "rm PATH",
		Short: "Delete a memory file or directory",
		Long:  "Deletes the memory file PATH, or the directory PATH with everything beneath it.",
		Args:  positional("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, done, err := a.openHandler(cmd.Context(), readWrite, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			return a.printResult(h.Delete(cmd.Context(), args[0]))
		},
	}
}
