package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newMvCmd) }

// newMvCmd is "cloudmem mv [--dry-run] OLD NEW": the handler's rename
// command, for a file or a whole directory. NEW must not exist. --dry-run
// checks both paths and prints what would be renamed.
func newMvCmd(a *app) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "mv [--dry-run] OLD NEW",
		Short: "Rename a memory file or directory",
		Long: "Renames the memory file or directory OLD to NEW, which must not exist. A path not starting\n" +
			"with / is relative to /memories. --dry-run prints \"would rename OLD to NEW\" and changes nothing.",
		Args: positional("OLD", "NEW"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			acc := readWrite
			if dryRun {
				acc = dryRunAccess
			}
			h, done, err := a.openHandler(ctx, acc, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			oldPath, newPath := memPath(args[0]), memPath(args[1])
			res := h.Rename(ctx, oldPath, newPath)
			if !dryRun || res.IsError {
				return a.printResult(res)
			}
			oldKey, _ := memory.Resolve(oldPath)
			newKey, _ := memory.Resolve(newPath)
			_, err = fmt.Fprintf(a.stdout, "would rename %s to %s\n", memory.PathOf(oldKey), memory.PathOf(newKey))
			return err
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be renamed and change nothing")
	return cmd
}
