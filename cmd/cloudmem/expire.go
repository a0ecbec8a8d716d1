package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newExpireCmd) }

// errNoExpiry: the store has no expiry rules, so expire has nothing to do.
var errNoExpiry = errors.New("the store has no expiry rules: name a policy file with expire rules in its URL (policy=PATH), or in a mount's")

// newExpireCmd is "cloudmem expire [--dry-run]": the sweep of the files
// that the store's expiry rules made expire (blob.Expire). Each is deleted
// at the version listed, so a file changed meanwhile is kept, and sweeps
// may run at once on many machines.
func newExpireCmd(a *app) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "expire [--dry-run]",
		Short: "Delete the memory files that expired",
		Long: "Deletes every memory file that an expiry rule of the store's policy file (policy=PATH) made\n" +
			"expire, and prints \"expired PATH\" for each. Expired files are already absent to every command;\n" +
			"expire deletes them from the storage. A file changed since it was listed is kept, so expire may\n" +
			"run from cron on many machines at once. --dry-run prints each file it would delete\n" +
			"(\"would expire PATH\") and changes nothing.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			acc := readWrite
			if dryRun {
				acc = readOnly
			}
			s, err := a.openStore(ctx, acc)
			if err != nil {
				return err
			}
			defer blob.Close(s)
			if !blob.HasExpiry(s) {
				return errNoExpiry
			}
			for info, err := range blob.Expire(ctx, s, dryRun) {
				if err != nil {
					return err
				}
				verb := "expired"
				if dryRun {
					verb = "would expire"
				}
				fmt.Fprintf(a.stdout, "%s %s\n", verb, memory.PathOf(info.Key))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be deleted and change nothing")
	return cmd
}
