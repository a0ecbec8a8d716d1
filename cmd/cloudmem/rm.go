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
				acc = readOnly
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
			switch {
			case k == kindDir && key == "":
				return a.printResult(h.Delete(ctx, path)) // the handler refuses /memories
			case k == kindDir && !recursive:
				return errIsDirectory(memory.PathOf(key))
			case dryRun && k == kindDir:
				for _, f := range files {
					fmt.Fprintf(a.stdout, "would delete %s\n", f.Path)
				}
				return nil
			case dryRun:
				_, err := fmt.Fprintf(a.stdout, "would delete %s\n", memory.PathOf(key))
				return err
			}
			return a.printResult(h.Delete(ctx, path))
		},
	}
	cmd.Flags().BoolVarP(&recursive, "recursive", "r", false, "delete a directory with everything beneath it")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be deleted and change nothing")
	return cmd
}
