package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newCatCmd) }

// newCatCmd is "cloudmem cat PATH": it writes the memory file PATH to
// stdout byte for byte (no line numbers, any content, images too), read
// with memory.Handler.ReadFile, so the path obeys the model's rules.
func newCatCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "cat PATH",
		Short: "Write a memory file to stdout, byte for byte",
		Long:  "Writes the memory file PATH (a path under /memories) to stdout, byte for byte.",
		Args:  positional("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, done, err := a.openHandler(cmd.Context(), readOnly, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			data, err := h.ReadFile(cmd.Context(), memPath(args[0]))
			if err != nil {
				return err
			}
			if _, err := a.stdout.Write(data); err != nil {
				return fmt.Errorf("writing stdout: %w", err)
			}
			return nil
		},
	}
}
