package main

import (
	"errors"
	"fmt"
	"os"

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
				// The stream is spooled to disk as it is read, so that
				// an import of any size holds only the files it writes.
				spool, serr := os.MkdirTemp("", "cloudmem-import-")
				if serr != nil {
					return fmt.Errorf("making a spool directory for the tar stream: %w", serr)
				}
				defer os.RemoveAll(spool)
				files, err = transfer.ReadTar(a.stdin, memory.ReadLimit(store), spool)
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
			problems, stop := splitProblems(err)
			unfinished := func() string {
				return fmt.Sprintf("%d of %s written; run import again to finish", stats.Written, plural(stats.New+stats.Replaced, "file"))
			}
			switch {
			case len(problems) > 0 && stop != nil: // files skipped, then a failure stopped the rest
				return problemsFailure(problems, a.describe(stop)+" ("+unfinished()+")")
			case len(problems) > 0 && stats.Written+stats.Unchanged == 0:
				// Refused before the first write, or every file skipped.
				return problemsFailure(problems, "nothing was imported")
			case len(problems) > 0:
				return problemsFailure(problems, fmt.Sprintf(verb+" %s (%d new, %d replaced, %d already there); %d not imported",
					plural(stats.New+stats.Replaced+stats.Unchanged, "file"), stats.New, stats.Replaced, stats.Unchanged, len(problems)))
			case stop != nil:
				return fmt.Errorf("%w (%s)", stop, unfinished())
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

// splitProblems returns the files an import could not move (a
// *transfer.ProblemsError in err) and, apart from them, the error that
// stopped it, if any.
func splitProblems(err error) ([]transfer.Problem, error) {
	pe, ok := errors.AsType[*transfer.ProblemsError](err)
	if !ok {
		return nil, err
	}
	var rest []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if e != error(pe) {
				rest = append(rest, e)
			}
		}
	}
	return pe.Problems, errors.Join(rest...)
}
