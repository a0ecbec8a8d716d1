package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newRmCmd) }

// newRmCmd is "cloudmem rm [-r] [--dry-run] PATH": the handler's delete
// command. A directory needs -r (it deletes everything beneath it);
// --dry-run prints what would be deleted and changes nothing.
func newRmCmd(a *app) *cobra.Command {
	var recursive, dryRun bool
	cmd := &cobra.Command{
		Use:   "rm [-r] [--dry-run] PATH",
		Short: "Delete a memory file or directory",
		Long: "Deletes the memory file PATH, or with -r the directory PATH with everything beneath it.\n" +
			"A PATH not starting with / is relative to /memories. --dry-run prints each file that would\n" +
			"be deleted (\"would delete PATH\") and changes nothing.",
		Args: positional("PATH"),
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
			path := memPath(args[0])
			k, files, err := pathKind(ctx, h, path)
			if err != nil {
				return err
			}
			key, _ := memory.Resolve(path)
			if k == kindDir && key != "" && !recursive {
				return errIsDirectory(memory.PathOf(key))
			}
			res := h.Delete(ctx, path)
			if !dryRun || res.IsError {
				return a.printResult(res)
			}
			if k != kindDir {
				files = []memory.FileInfo{{Path: memory.PathOf(key)}}
			}
			for _, f := range files {
				fmt.Fprintf(a.stdout, "would delete %s\n", f.Path)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "delete a directory with everything beneath it")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be deleted and change nothing")
	return cmd
}
