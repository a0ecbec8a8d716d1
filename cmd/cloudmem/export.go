package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/transfer"
)

func init() { register(newExportCmd) }

// newExportCmd is "cloudmem export DIR|-": transfer.Export of the store, as
// a tar stream on stdout ("-") or as plain files under DIR (a new or empty
// directory; see transfer.NewDirWriter).
func newExportCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "export DIR|-",
		Short: "Write every memory file to a directory or a tar stream",
		Long: "Writes every memory file of the store as plain files under DIR (a new or empty directory),\n" +
			"or as a tar stream on stdout (-). Names are the paths under /memories: notes/a.md.\n" +
			"The store's own bookkeeping (.cloudmem/) is left out. import reads both forms back.",
		Args: positional("DIR (- writes a tar stream to stdout)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := a.openStore(cmd.Context(), readOnly)
			if err != nil {
				return err
			}
			defer blob.Close(store)
			var (
				w      transfer.FileWriter
				report io.Writer = a.stdout
			)
			if args[0] == "-" {
				w, report = transfer.NewTarWriter(a.stdout), a.stderr
			} else {
				d, err := transfer.NewDirWriter(args[0])
				if err != nil {
					return err
				}
				defer d.Close()
				w = d
			}
			stats, err := transfer.Export(cmd.Context(), store, w)
			if pe, ok := errors.AsType[*transfer.ProblemsError](err); ok { // files over the read limit
				return problemsFailure(pe.Problems, fmt.Sprintf("exported %s, %d bytes; %d not exported",
					plural(stats.Files, "file"), stats.Bytes, len(pe.Problems)))
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(report, "exported %s, %d bytes\n", plural(stats.Files, "file"), stats.Bytes)
			return err
		},
	}
}
