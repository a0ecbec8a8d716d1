package search_test

import (
	"context"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/search"
)

// TestRun checks the tool's answers to whole inputs, texts compared whole.
func TestRun(t *testing.T) {
	s := mem.New(nil)
	put(t, s, notes)
	x := search.New(s, nil)
	const bad = `Error: The search input must be an object with "query" (a string of words) and optionally "path" (a string) and "limit" (an integer from 1 to 100).`
	for _, c := range []struct {
		input, text string
		isError     bool
	}{
		{`{"query": "signing", "path": "/memories/notes", "limit": 1}`, "Found 1 file for \"signing\" in /memories/notes:\n/memories/notes/keys.md (lines 2, 3)\n     2\tkeys: deploy, «signing»", false},
		{`{"query": "vault", "extra": true}`, "Found 1 file for \"vault\" in /memories:\n/memories/deploy.md (line 2)\n     2\tThe deploy key lives in the «vault».", false},
		{`{"query": "vault", "limit": 0}`, "Error: The limit must be between 1 and 100; got 0.", true},
		{`{"query": "vault", "limit": 1000}`, "Error: The limit must be between 1 and 100; got 1000.", true},
		{`{"query": "vault", "path": "/memories/../x"}`, "Error: Path /memories/../x would escape /memories directory", true},
		{`{"query": "..."}`, "Error: The query has no words to search for.", true},
		{`{"path": "/memories"}`, bad, true},
		{`{"query": 3}`, bad, true},
		{`{"query": "a", "limit": 2.5}`, bad, true},
		{`["query"]`, bad, true},
		{`null`, bad, true},
		{``, bad, true},
		{`{"query": "a"} {}`, bad, true},
		{`{"query": "a"}]`, bad, true},
	} {
		text, res, isError := x.Run(context.Background(), []byte(c.input))
		if text != c.text || isError != c.isError || isError && res.Hits != nil {
			t.Errorf("Run(%s) = %q, %v, %+v\nwant %q, %v", c.input, text, isError, res, c.text, c.isError)
		}
	}
}
