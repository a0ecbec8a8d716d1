package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newViewCmd) }

// newViewCmd is "cloudmem view PATH [--range A,B]": the view command, its
// result text on stdout.
func newViewCmd(a *app) *cobra.Command {
	var rng string
	cmd := &cobra.Command{
		Use:   "view PATH [--range A,B]",
		Short: "Print a memory file or directory as the model sees it",
		Long:  "Prints the memory file or directory PATH (/memories or a path under it), as the model sees it.",
		Args:  positional("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			var viewRange []int
			if rng != "" {
				r, err := parseRange(rng)
				if err != nil {
					return err
				}
				viewRange = r
			}
			h, done, err := a.openHandler(cmd.Context(), readOnly, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			return a.printResult(h.View(cmd.Context(), memPath(args[0]), viewRange))
		},
	}
	cmd.Flags().StringVar(&rng, "range", "", "show only lines `A,B` of a file (B = -1: to the end)")
	return cmd
}

// parseRange parses "A,B" into two integers; a malformed range is a usage
// error.
func parseRange(s string) ([]int, error) {
	a, b, ok := strings.Cut(s, ",")
	if ok {
		first, err1 := strconv.Atoi(strings.TrimSpace(a))
		last, err2 := strconv.Atoi(strings.TrimSpace(b))
		if err1 == nil && err2 == nil {
			return []int{first, last}, nil
		}
	}
	return nil, usageErrorf("--range %q: want two integers A,B, such as 1,20", s)
}
