package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newDiffCmd) }

// newDiffCmd is "cloudmem diff PATH@V1 [PATH@V2]".
func newDiffCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "diff PATH@V1 [PATH@V2|@V2]",
		Short: "Show the changes between two versions of a memory file (unified diff)",
		Long: "Prints the unified diff from version V1 of the memory file PATH to version V2, or to the\n" +
			"file's current content when V2 is not given (a deleted file counts as empty). Nothing is\n" +
			"printed when they are equal. @V2 alone is V2 of the same PATH; a version may be a unique\n" +
			"prefix of at least 4 digits.",
		Args: positional("PATH@V1", "[PATH@V2]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, id, err := resolveRef(args[0])
			if err != nil {
				return err
			}
			to, toID := key, ""
			if len(args) == 2 {
				second := args[1]
				if strings.HasPrefix(second, "@") { // @V2: the same PATH
					second = args[0][:strings.LastIndexByte(args[0], '@')] + second
				}
				if to, toID, err = resolveRef(second); err != nil {
					return err
				}
			}
			hs, _, done, err := a.openHistory(cmd.Context(), readOnly)
			if err != nil {
				return err
			}
			defer done()
			ctx := cmd.Context()
			if id, err = resolveVersion(ctx, hs, key, id); err != nil {
				return err
			}
			if toID != "" {
				if toID, err = resolveVersion(ctx, hs, to, toID); err != nil {
					return err
				}
			}
			old, _, err := hs.Show(ctx, key, id)
			if err != nil {
				return err
			}
			var cur []byte
			bName := memory.PathOf(to)
			if toID == "" {
				cur, _, err = hs.Get(ctx, to, blob.MaxObjectBytes)
				if err != nil && !errors.Is(err, blob.ErrNotExist) {
					return err
				}
			} else {
				if cur, _, err = hs.Show(ctx, to, toID); err != nil {
					return err
				}
				bName += "@" + toID
			}
			_, err = io.WriteString(a.stdout, history.UnifiedDiff(memory.PathOf(key)+"@"+id, bName, old, cur))
			if err != nil {
				return fmt.Errorf("writing stdout: %w", err)
			}
			return nil
		},
	}
}
