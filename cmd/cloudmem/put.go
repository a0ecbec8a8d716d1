package main

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newPutCmd) }

// newPutCmd is "cloudmem put PATH [FILE|-] [--force]": it creates the
// memory file PATH with the content of FILE, or of stdin when FILE is "-"
// or missing, through the handler's create command, so the model's rules
// and limits apply (size, file count, a file where a directory should be).
// With --force an existing file is replaced (memory.Options.Overwrite).
// The content must be UTF-8 text, as the model's files are; import stores
// any bytes.
func newPutCmd(a *app) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "put PATH [FILE|-] [--force]",
		Short: "Create a memory file from a file or stdin",
		Long: "Creates the memory file PATH with the content of FILE, or of stdin when FILE is - or missing.\n" +
			"The content must be UTF-8 text, within the memory tool's limits.",
		Args: positional("PATH", "[FILE]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, file := memPath(args[0]), "-"
			if len(args) == 2 {
				file = args[1]
			}
			var (
				content []byte
				err     error
			)
			if file == "-" {
				content, err = io.ReadAll(a.stdin)
				file = "stdin"
			} else {
				content, err = os.ReadFile(file)
			}
			if err != nil {
				return fmt.Errorf("reading the content: %w", err)
			}
			if !utf8.Valid(content) {
				return fmt.Errorf("%s is not UTF-8 text; memory files are text (import stores any bytes)", file)
			}
			h, done, err := a.openHandler(cmd.Context(), readWrite, memory.Options{Overwrite: force})
			if err != nil {
				return err
			}
			defer done()
			return a.printResult(h.Create(cmd.Context(), path, string(content)))
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace PATH if it is already a file")
	return cmd
}
