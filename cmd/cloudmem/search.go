package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

func init() { register(newSearchCmd) }

// newSearchCmd is "cloudmem search QUERY [--json] [--limit N] [--path
// DIR] [--index-cache FILE]": the files that match QUERY best, from package
// search over the store opened read-only (docs/spec.md "Search" gives the
// texts). The index is built for this one query: one listing, then each
// file read once; with --index-cache, only the files changed since the
// file was written are read.
func newSearchCmd(a *app) *cobra.Command {
	var (
		asJSON     bool
		limit      int
		dir        string
		indexCache string
	)
	cmd := &cobra.Command{
		Use:   "search QUERY [--json] [--limit N] [--path DIR] [--index-cache FILE]",
		Short: "Find the memory files that match a query, best first",
		Long: "Searches the memory files for the words of QUERY (quote it when it has several) and prints the\n" +
			"files that match best, each with the lines that match and its best line, matches in « ».\n" +
			"Case and accents are ignored; \"two words\" in quotes is a phrase; word* matches every word\n" +
			"that starts with word. Hidden files (.name, node_modules) are not searched. With --json, one\n" +
			"JSON object: {\"query\", \"dir\", \"total\", \"hits\": [{\"path\", \"score\", \"lines\", \"line\", \"snippet\"}]}.\n" +
			"With --index-cache FILE the index is also kept in FILE (mode 0600, holding the files' text), so\n" +
			"that the next search reads only the files changed since; refused on an encrypted store.",
		Args: positional("QUERY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if limit < 1 || limit > search.MaxLimit { // the Go API's 0 (the default) is out of range here
				return searchError{fmt.Errorf("%w; got %d.", search.ErrLimit, limit)}
			}
			s, err := a.openStore(ctx, readOnly)
			if err != nil {
				return err
			}
			defer blob.Close(s)
			x, err := openIndex(s, indexCache)
			if err != nil {
				return err
			}
			res, err := x.Search(ctx, search.Request{Query: args[0], Dir: dir, Limit: limit})
			if err != nil {
				return searchError{err}
			}
			if err := x.CacheFileError(); err != nil { // the results are right all the same
				fmt.Fprintf(a.stderr, "cloudmem search: warning: %v\n", err)
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				enc.SetEscapeHTML(false)
				return enc.Encode(res)
			}
			_, err = fmt.Fprintln(a.stdout, res.Text())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object with the query, the directory, the total and the hits")
	cmd.Flags().IntVar(&limit, "limit", search.DefaultLimit, "show the best `N` files, 1 to 100")
	cmd.Flags().StringVar(&dir, "path", "/memories", "search under the directory (or the file) `DIR`")
	addIndexCacheFlag(cmd, &indexCache)
	return cmd
}

// errIndexCacheEncrypted is the refusal of --index-cache on an encrypted
// store (docs/spec.md "Search").
var errIndexCacheEncrypted = errors.New("--index-cache is refused on an encrypted store: the index file would hold the files' plain text")

// addIndexCacheFlag adds --index-cache FILE (search.Options.CacheFile) to
// cmd, for search and mcp.
func addIndexCacheFlag(cmd *cobra.Command, file *string) {
	cmd.Flags().StringVar(file, "index-cache", "", "also keep the search index in the local `FILE` (mode 0600, the files' text), so that the next process reads only what changed; refused on an encrypted store")
}

// openIndex returns the search index over s, kept in cacheFile too when it
// is not empty; on an encrypted store that is errIndexCacheEncrypted,
// before anything is read or written.
func openIndex(s blob.Store, cacheFile string) (*search.Index, error) {
	x, err := search.Open(s, &search.Options{CacheFile: cacheFile})
	if errors.Is(err, search.ErrEncryptedCache) {
		return nil, errIndexCacheEncrypted
	}
	return x, err
}

// searchError is a failed search: the model's text without "Error: " for
// the query's own mistakes, the store's error for a storage failure.
type searchError struct{ err error }

func (e searchError) Error() string {
	_, pathErr := errors.AsType[*memory.Error](e.err)
	if pathErr || errors.Is(e.err, search.ErrNoWords) || errors.Is(e.err, search.ErrLimit) || errors.Is(e.err, search.ErrQueryTooLong) {
		return strings.TrimPrefix(search.ErrorText(e.err), "Error: ")
	}
	return e.err.Error()
}

func (e searchError) Unwrap() error { return e.err }
