package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/storeurl"
)

// TestSearch runs cloudmem search and compares whole outputs.
func TestSearch(t *testing.T) {
	store := seed(t, storeName(t), map[string]string{
		"notes/tea.md": "Green tea at 80 degrees.\nBlack tea at 95.\n",
		"coffee.md":    "Espresso, no tea.\n",
		".hidden.md":   "tea",
	})
	runCases(t, store, []cliCase{
		// BM25: one tea in 3 words outranks two in 9
		{args: []string{"search", "tea"}, stdout: "Found 2 files for \"tea\" in /memories:\n" +
			"/memories/coffee.md (line 1)\n     1\tEspresso, no «tea».\n" +
			"/memories/notes/tea.md (lines 1, 2)\n     1\tGreen «tea» at 80 degrees.\n"},
		{args: []string{"search", "tea", "--limit", "1", "--path", "/memories/notes"}, stdout: "Found 1 file for \"tea\" in /memories/notes:\n" +
			"/memories/notes/tea.md (lines 1, 2)\n     1\tGreen «tea» at 80 degrees.\n"},
		{args: []string{"search", `"black tea"`, "--json"}, stdout: `{
  "query": "\"black tea\"",
  "dir": "/memories",
  "total": 1,
  "hits": [
    {
      "path": "/memories/notes/tea.md",
      "score": 0.5754,
      "lines": [
        2
      ],
      "line": 2,
      "snippet": "«Black tea» at 95."
    }
  ]
}
`},
		{args: []string{"search", "milk"}, stdout: "No file matches \"milk\" in /memories.\n"},
		{args: []string{"search", "tea", "--limit", "0"}, code: 1, stderr: "cloudmem search: The limit must be between 1 and 100; got 0.\n"},
		{args: []string{"search", "!!"}, code: 1, stderr: "cloudmem search: The query has no words to search for.\n"},
		{args: []string{"search", "tea", "--path", "/tmp"}, code: 1, stderr: "cloudmem search: Path must start with /memories, got: /tmp\n"},
	})
}

// The tests open stores named counted://NAME: the shared store NAME,
// through a blob.Counter of its own, so a test counts the storage calls a
// command makes.
var (
	countedMu sync.Mutex
	counters  = map[string]*blob.Counter{}
)

func init() {
	storeurl.Register("counted", storeurl.Backend{Open: func(_ context.Context, loc *storeurl.Location) (blob.Store, error) {
		return counter(loc.URL.Host), nil
	}})
}

// counter returns the Counter that counted://name opens.
func counter(name string) *blob.Counter {
	countedMu.Lock()
	defer countedMu.Unlock()
	c, ok := counters[name]
	if !ok {
		c = blob.NewCounter(sharedStore(name))
		counters[name] = c
	}
	return c
}

// TestSearchIndexCache runs cloudmem search with --index-cache three
// times: the first reads every file and writes the index file (mode 0600),
// the second reads no file, the third only the one changed in between;
// each prints the whole result. Storage calls are counted: the one Stat of
// each run is storeurl's guard against an encrypted store (its first call).
func TestSearchIndexCache(t *testing.T) {
	name := storeName(t)
	seed(t, name, map[string]string{
		"notes/tea.md": "Green tea at 80 degrees.\nBlack tea at 95.\n",
		"coffee.md":    "Espresso, no tea.\n",
		".hidden.md":   "tea",
	})
	store, cache := "counted://"+name, filepath.Join(t.TempDir(), "index")
	run := func(wantOut string, want blob.Counts) {
		t.Helper()
		counter(name).Reset()
		runCases(t, store, []cliCase{{args: []string{"search", "tea", "--index-cache", cache}, stdout: wantOut}})
		if got := counter(name).Counts(); got != want {
			t.Errorf("storage calls %+v, want %+v", got, want)
		}
	}
	const both = "Found 2 files for \"tea\" in /memories:\n" +
		"/memories/coffee.md (line 1)\n     1\tEspresso, no «tea».\n" +
		"/memories/notes/tea.md (lines 1, 2)\n     1\tGreen «tea» at 80 degrees.\n"
	run(both, blob.Counts{Stat: 1, List: 1, Get: 2})
	if fi, err := os.Stat(cache); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the index file: %v, %v; want mode 0600", fi, err)
	}
	run(both, blob.Counts{Stat: 1, List: 1}) // from the index file
	// A query the index refuses reads nothing and writes no index file.
	other := filepath.Join(t.TempDir(), "other")
	counter(name).Reset()
	runCases(t, store, []cliCase{{args: []string{"search", "!!", "--index-cache", other}, code: 1,
		stderr: "cloudmem search: The query has no words to search for.\n"}})
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("a refused query wrote the index file (stat: %v)", err)
	}
	if got := counter(name).Counts(); got.List+got.Get != 0 {
		t.Errorf("a refused query made %+v", got)
	}
	if _, err := sharedStore(name).Put(t.Context(), "coffee.md", []byte("Espresso and milk.\n"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	run("Found 1 file for \"tea\" in /memories:\n"+
		"/memories/notes/tea.md (lines 1, 2)\n     1\tGreen «tea» at 80 degrees.\n", blob.Counts{Stat: 1, List: 1, Get: 1})
}

// TestSearchIndexCacheRefused: an encrypted store refuses --index-cache
// before anything is read or written; a file that cannot be written is a
// warning after the results, which are right all the same.
func TestSearchIndexCacheRefused(t *testing.T) {
	keys, dir := t.TempDir(), t.TempDir()
	idFile, _ := newKey(t, keys, "id.txt")
	enc := "file:" + dir + "?encrypt=age&age_identity_file=" + idFile
	runCases(t, enc, []cliCase{{args: []string{"put", "/memories/a.md", "-"}, stdin: "tea\n", stdout: "File created successfully at: /memories/a.md\n"}})
	cache := filepath.Join(t.TempDir(), "index")
	runCases(t, enc, []cliCase{{args: []string{"search", "tea", "--index-cache", cache}, code: 1,
		stderr: "cloudmem search: --index-cache is refused on an encrypted store: the index file would hold the files' plain text\n"}})
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Errorf("the refused search wrote the index file (stat: %v)", err)
	}
	// Without --index-cache it searches.
	runCases(t, enc, []cliCase{{args: []string{"search", "tea"}, stdout: "Found 1 file for \"tea\" in /memories:\n/memories/a.md (line 1)\n     1\t«tea»\n"}})

	plain := seed(t, storeName(t), map[string]string{"a.md": "tea\n"})
	missing := filepath.Join(t.TempDir(), "no-such-dir", "index")
	code, stdout, stderr := cloudmem([]string{"--store", plain, "search", "tea", "--index-cache", missing}, "", nil)
	want := "cloudmem search: warning: search: writing the index file " + missing + ": no such file or directory\n"
	if code != 0 || stdout != "Found 1 file for \"tea\" in /memories:\n/memories/a.md (line 1)\n     1\t«tea»\n" || stderr != want {
		t.Errorf("an index file in a missing directory: exit %d\nstdout:\n%s\nstderr:\n%s\nwant stderr:\n%s", code, stdout, stderr, want)
	}
}

// TestMCPIndexCache runs "cloudmem mcp --index-cache FILE" over stdio (in
// this process, through pipes) twice, each time with one memory_search:
// the first server reads every file, the second reads none, and both
// answer the whole same text. --index-cache goes with stdio only, and an
// encrypted store refuses it.
func TestMCPIndexCache(t *testing.T) {
	name := storeName(t)
	seed(t, name, map[string]string{"notes/tea.md": "Green tea.\n", "coffee.md": "Espresso.\n"})
	store, cache := "counted://"+name, filepath.Join(t.TempDir(), "index")
	const want = "Found 1 file for \"tea\" in /memories:\n/memories/notes/tea.md (line 1)\n     1\tGreen «tea»."
	// One Stat is storeurl's guard, one Get the probe of "the store
	// answered"; the others are the index's.
	for i, wantCalls := range []blob.Counts{{Stat: 1, List: 1, Get: 3}, {Stat: 1, List: 1, Get: 1}} {
		counter(name).Reset()
		if got := mcpSearch(t, []string{"--store", store, "mcp", "--index-cache", cache}, `{"query":"tea"}`); got != want {
			t.Errorf("server %d: memory_search answered %q, want %q", i+1, got, want)
		}
		if got := counter(name).Counts(); got != wantCalls {
			t.Errorf("server %d: storage calls %+v, want %+v", i+1, got, wantCalls)
		}
	}

	keys, dir := t.TempDir(), t.TempDir()
	idFile, _ := newKey(t, keys, "id.txt")
	enc := "file:" + dir + "?encrypt=age&age_identity_file=" + idFile
	runCases(t, enc, []cliCase{
		{args: []string{"mcp", "--index-cache", cache}, code: 1,
			stderr: "cloudmem mcp: --index-cache is refused on an encrypted store: the index file would hold the files' plain text\n"},
		{args: []string{"mcp", "--index-cache", cache, "--http", "127.0.0.1:0"}, code: 2,
			stderr: usageErr("mcp", "--index-cache serves stdio only: over --http each tenant has an index of its own, in memory", mcpUse)},
		{args: []string{"mcp", "--index-cache", cache, "--search=false"}, code: 2,
			stderr: usageErr("mcp", "--index-cache needs --search", mcpUse)},
	})
}

// mcpUse is the synopsis of cloudmem mcp.
const mcpUse = "mcp [--http ADDR [--token-file FILE] [--tls-cert FILE --tls-key FILE]]"

// mcpSearch runs cloudmem with args (an mcp over stdio) in this process,
// calls memory_search once with input, closes the session and returns the
// text of the answer once the server has returned.
func mcpSearch(t *testing.T, args []string, input string) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		code := run(args, inR, outW, &stderr, func(string) string { return "" })
		outW.Close()
		inR.Close()
		done <- code
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.SearchToolName, Arguments: json.RawMessage(input)})
	if err != nil {
		t.Fatal(err)
	}
	cs.Close()
	if code := <-done; code != 0 || stderr.String() != "cloudmem mcp: the store answered\n" {
		t.Errorf("the server's exit %d, stderr %q", code, stderr.String())
	}
	if len(res.Content) != 1 || res.IsError {
		t.Fatalf("memory_search: %+v", res)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("memory_search: %+v", res.Content[0])
	}
	return text.Text
}
