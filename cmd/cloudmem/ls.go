package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newLsCmd) }

// newLsCmd is "cloudmem ls [PATH] [--json]": every memory file under the
// directory PATH (default /memories), recursively, hidden ones included,
// from memory.Handler.Files. Each line is the size in bytes, right-aligned,
// and the path; --json prints one JSON array of lsEntry instead.
func newLsCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [PATH] [--json]",
		Short: "List the memory files under a directory, with sizes",
		Long: "Lists every memory file under the directory PATH (default /memories), recursively and in\n" +
			"byte order, hidden files included: each line is the size in bytes and the path. With --json,\n" +
			"one JSON array of {\"path\", \"size\", \"version\", \"modified\"} objects.",
		Args: positional("[PATH]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "/memories"
			if len(args) == 1 {
				dir = memPath(args[0])
			}
			h, done, err := a.openHandler(cmd.Context(), readOnly, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			files, err := h.Files(cmd.Context(), dir)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a, files)
			}
			_, err = fmt.Fprint(a.stdout, lsText(files))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of objects with path, size, version and modified")
	return cmd
}

// lsText is ls's text listing: one line per file, the size right-aligned
// to the widest.
func lsText(files []memory.FileInfo) string {
	width := 0
	for _, f := range files {
		width = max(width, len(strconv.FormatInt(f.Size, 10)))
	}
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%*d  %s\n", width, f.Size, f.Path)
	}
	return b.String()
}

// lsEntry is one file in ls --json.
type lsEntry struct {
	Path     string `json:"path"`               // /memories/notes/a.md
	Size     int64  `json:"size"`               // bytes
	Version  string `json:"version"`            // the store's opaque version
	Modified string `json:"modified,omitempty"` // RFC 3339, UTC; absent when the store does not say
}

// printJSON prints files as one JSON array of lsEntry, then a newline.
func printJSON(a *app, files []memory.FileInfo) error {
	out := make([]lsEntry, 0, len(files))
	for _, f := range files {
		e := lsEntry{Path: f.Path, Size: f.Size, Version: f.Version}
		if !f.Modified.IsZero() {
			e.Modified = f.Modified.UTC().Format(time.RFC3339Nano)
		}
		out = append(out, e)
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
