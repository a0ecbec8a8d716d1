package main

import (
	"encoding/json"
	"fmt"
	"math"
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
	var asJSON, human bool
	cmd := &cobra.Command{
		Use:   "ls [PATH] [-h] [--json]",
		Short: "List the memory files under a directory, with sizes",
		Long: "Lists every memory file under the directory PATH (default /memories), recursively and in\n" +
			"byte order, hidden files included: each line is the size in bytes and the path. -h prints\n" +
			"sizes as 1.5K, 12M (powers of 1024). With --json, one JSON array of {\"path\", \"size\",\n" +
			"\"version\", \"modified\"} objects. A PATH not starting with / is relative to /memories.",
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
			size := func(n int64) string { return strconv.FormatInt(n, 10) }
			if human {
				size = humanSize
			}
			_, err = fmt.Fprint(a.stdout, lsText(files, size))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of objects with path, size, version and modified")
	// -h is --human-readable, as in ls; --help alone is the help.
	cmd.Flags().Bool("help", false, "help for ls")
	cmd.Flags().BoolVarP(&human, "human-readable", "h", false, "print sizes as 1.5K, 12M, 3.0G (powers of 1024); --help is the help")
	return cmd
}

// lsText is ls's text listing: one line per file, the size as size
// writes it, right-aligned to the widest.
func lsText(files []memory.FileInfo, size func(int64) string) string {
	width := 0
	for _, f := range files {
		width = max(width, len(size(f.Size)))
	}
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%*s  %s\n", width, size(f.Size), f.Path)
	}
	return b.String()
}

// humanSize writes n bytes as ls -h does: under 1024 as they are, then
// with K, M, G, T, P or E (powers of 1024), one decimal below 10 and none
// from 10 on, rounded up (1025 bytes is 1.1K: never less than it is).
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10)
	}
	const units = "KMGTPE"
	f := float64(n)
	for i := range len(units) {
		f /= 1024
		if f < 10 {
			// one decimal, rounded up; 9.95 and up becomes 10
			if d := math.Ceil(f*10) / 10; d < 10 {
				return strconv.FormatFloat(d, 'f', 1, 64) + units[i:i+1]
			}
			f = 10
		}
		if c := math.Ceil(f); c < 1024 || i == len(units)-1 {
			return strconv.FormatFloat(c, 'f', 0, 64) + units[i:i+1]
		}
	}
	return strconv.FormatInt(n, 10) // not reached
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
