package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func init() { register(newShowCmd) }

// newShowCmd is "cloudmem show PATH@VERSION": the content of one version.
func newShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show PATH@VERSION",
		Short: "Write the content of one version of a memory file to stdout",
		Long: "Writes the content of version VERSION (as \"cloudmem history PATH\" lists it, or a unique\n" +
			"prefix of at least 4 digits) of the memory file PATH to stdout, byte for byte. A deletion or\n" +
			"a redacted version has none.",
		Args: positional("PATH@VERSION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, id, err := resolveRef(args[0])
			if err != nil {
				return err
			}
			hs, _, done, err := a.openHistory(cmd.Context(), readOnly)
			if err != nil {
				return err
			}
			defer done()
			if id, err = resolveVersion(cmd.Context(), hs, key, id); err != nil {
				return err
			}
			data, _, err := hs.Show(cmd.Context(), key, id)
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
