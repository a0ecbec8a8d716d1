package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/transfer"
)

func init() { register(newImportCmd) }

// newImportCmd is "cloudmem import DIR|- [--overwrite]": the reverse of
// export, with transfer.Import: the files of a tar stream on stdin ("-") or
// the regular files under DIR, all checked before anything is written.
func newImportCmd(a *app) *cobra.Command {
	var overwrite, dryRun bool
	cmd := &cobra.Command{
		Use:   "import DIR|- [--overwrite] [--dry-run]",
		Short: "Store the files of a directory or a tar stream as memory files",
		Long: "Stores every regular file under DIR, or every file of a tar stream on stdin (-), as the\n" +
			"memory file of the same relative name (notes/a.md becomes /memories/notes/a.md).\n" +
			"The whole input is checked before anything is written: a bad name, a symbolic link or\n" +
			"a clash with the store stops the import. Files already there with the same content are\n" +
			"skipped, so an interrupted import can be run again. --dry-run makes every check of the\n" +
			"import, prints what it would write and changes nothing.",
		Args: positional("DIR (- reads a tar stream from stdin)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var (
				files []transfer.File
				err   error
			)
			acc := readWrite
			if dryRun {
				acc = dryRunAccess
			}
			store, err := a.openStore(cmd.Context(), acc)
			if err != nil {
				return err
			}
			defer blob.Close(store)
			if args[0] == "-" {
				files, err = transfer.ReadTar(a.stdin, memory.ReadLimit(store))
			} else {
				files, err = transfer.ReadDir(args[0], memory.ReadLimit(store))
			}
			if err != nil {
				return err
			}
			verb := "imported"
			if dryRun {
				verb = "would import"
			}
			stats, err := transfer.Import(cmd.Context(), store, files,
				&transfer.ImportOptions{Overwrite: overwrite})
			if pe, ok := errors.AsType[*transfer.ProblemsError](err); ok {
				if !errors.Is(pe.Problems[0].Kind, transfer.ErrTooLarge) {
					return problemsFailure(pe.Problems, "nothing was imported")
				}
				return problemsFailure(pe.Problems, fmt.Sprintf(verb+" %s (%d new, %d replaced, %d already there); %d not imported",
					plural(stats.New+stats.Replaced+stats.Unchanged, "file"), stats.New, stats.Replaced, stats.Unchanged, len(pe.Problems)))
			}
			if err != nil {
				return fmt.Errorf("%w (%d of %s written; run import again to finish)",
					err, stats.Written, plural(stats.New+stats.Replaced, "file"))
			}
			_, err = fmt.Fprintf(a.stdout, verb+" %s (%d new, %d replaced, %d already there)\n",
				plural(stats.New+stats.Replaced+stats.Unchanged, "file"), stats.New, stats.Replaced, stats.Unchanged)
			return err
		},
	}
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace files the store holds with other content")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be imported and change nothing")
	return cmd
}
