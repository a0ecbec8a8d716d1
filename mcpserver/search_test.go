package mcpserver_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

// callResult is what a test reads of a tool result: its one text, its
// flag and its structured content as JSON (the client decodes it into a
// map, so its keys come back sorted).
type callResult struct {
	text       string
	isError    bool
	structured string
}

func searchCall(t *testing.T, cs *mcp.ClientSession, tool, args string) callResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s %s: %d contents", tool, args, len(res.Content))
	}
	out := callResult{text: res.Content[0].(*mcp.TextContent).Text, isError: res.IsError}
	if res.StructuredContent != nil {
		js, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		out.structured = string(js)
	}
	return out
}

// TestSearchTool: with Options.Search the server lists memory_search,
// read-only, described as docs/spec.md says; a file the memory tool just
// wrote is found by the next search, as text and as structured content.
func TestSearchTool(t *testing.T) {
	store := mem.New(nil)
	x := search.New(store, nil)
	h, err := memory.New(store, memory.Options{Observer: x.Observer(nil)})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, mcpserver.New(h, &mcpserver.Options{Logger: quiet, Search: x}))
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 2 || list.Tools[0].Name != "memory" || list.Tools[1].Name != "memory_search" {
		t.Fatalf("tools: %+v", list.Tools)
	}
	st := list.Tools[1]
	if a := st.Annotations; st.Description != search.ToolDescription || a == nil || !a.ReadOnlyHint || !a.IdempotentHint {
		t.Errorf("memory_search: %q, %+v", st.Description, st.Annotations)
	}
	schema, _ := json.Marshal(st.InputSchema)
	const wantSchema = `{"properties":{"limit":{"description":"How many files to return, best first; 10 if left out.","maximum":100,"minimum":1,"type":"integer"},"path":{"description":"The directory or file to search: /memories, the default, or a path under it.","type":"string"},"query":{"description":"The words to look for.","type":"string"}},"required":["query"],"type":"object"}`
	if string(schema) != wantSchema {
		t.Errorf("schema %s\nwant %s", schema, wantSchema)
	}
	if r := searchCall(t, cs, "memory", `{"command":"create","path":"/memories/notes/tea.md","file_text":"Green tea at 80 degrees.\n"}`); r.isError {
		t.Fatal(r.text)
	}
	for _, c := range []struct {
		args string
		want callResult
	}{
		{`{"query":"TEA degrees"}`, callResult{text: "Found 1 file for \"TEA degrees\" in /memories:\n/memories/notes/tea.md (line 1)\n     1\tGreen «tea» at 80 «degrees».",
			structured: `{"dir":"/memories","hits":[{"line":1,"lines":[1],"path":"/memories/notes/tea.md","score":0.5754,"snippet":"Green «tea» at 80 «degrees»."}],"query":"TEA degrees","total":1}`}},
		{`{"query":"coffee","path":"/memories/notes"}`, callResult{text: `No file matches "coffee" in /memories/notes.`,
			structured: `{"dir":"/memories/notes","hits":[],"query":"coffee","total":0}`}},
		{`{"query":""}`, callResult{text: "Error: The query has no words to search for.", isError: true}},
	} {
		if got := searchCall(t, cs, "memory_search", c.args); got != c.want {
			t.Errorf("memory_search %s:\n%+v\nwant\n%+v", c.args, got, c.want)
		}
	}
}

// TestSearchTenants: over HTTP each tenant searches its own tree, mounts
// included, read-only ones too; never another tenant's files, never hidden
// names.
func TestSearchTenants(t *testing.T) {
	tokens, err := mcpserver.ParseTokens([]byte(`{"tenants": [
		{"name": "alice", "token": "alice-token-0123456789abcdef0123456789", "mounts": [
			{"name": "team", "prefix": "team", "readonly": true}, {"name": "me", "prefix": "users/alice"}]},
		{"name": "bob", "token": "bob-token-0123456789abcdef0123456789ab", "prefix": "users/bob", "readonly": true}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	store := mem.New(nil)
	put(t, store, map[string]string{"team/style.md": "Shared style: tabs.\n", "team/.draft.md": "shared draft\n",
		"users/bob/b.md": "shared by bob\n"})
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: store, Tokens: tokens, Logger: quiet, Search: &search.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	alice := connectHTTP(t, ts.URL, "alice-token-0123456789abcdef0123456789")
	bob := connectHTTP(t, ts.URL, "bob-token-0123456789abcdef0123456789ab")
	if r := searchCall(t, alice, "memory", `{"command":"create","path":"/memories/me/a.md","file_text":"shared by alice\n"}`); r.isError {
		t.Fatal(r.text)
	}
	steps := []struct {
		who  *mcp.ClientSession
		args string
		want string
	}{
		{alice, `{"query":"shared"}`, "Found 2 files for \"shared\" in /memories:\n/memories/me/a.md (line 1)\n     1\t«shared» by alice\n/memories/team/style.md (line 1)\n     1\t«Shared» style: tabs."},
		{alice, `{"query":"bob draft"}`, `No file matches "bob draft" in /memories.`},
		{bob, `{"query":"shared"}`, "Found 1 file for \"shared\" in /memories:\n/memories/b.md (line 1)\n     1\t«shared» by bob"},
	}
	for _, s := range steps {
		if got := searchCall(t, s.who, "memory_search", s.args); got.text != s.want || got.isError {
			t.Errorf("%s:\n%s\nwant\n%s", s.args, got.text, s.want)
		}
	}
}
