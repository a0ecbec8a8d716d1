package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// roundRobin hands each request to the next of replicas, as a load
// balancer without session affinity does, and counts the responses that
// carry a session id (a stateless server sets none).
type roundRobin struct {
	replicas []http.Handler
	next     atomic.Int64
	sessions atomic.Int64
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := rr.next.Add(1) % int64(len(rr.replicas))
	rr.replicas[i].ServeHTTP(w, r)
	if w.Header().Get("Mcp-Session-Id") != "" {
		rr.sessions.Add(1)
	}
}

// replicas returns n stateless HTTP servers over store behind a round robin.
func replicas(t *testing.T, store blob.Store, n int) (*roundRobin, *httptest.Server) {
	t.Helper()
	rr := &roundRobin{}
	for range n {
		srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: store, Tokens: teamTokens(t), Stateless: true, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		rr.replicas = append(rr.replicas, srv)
	}
	ts := httptest.NewServer(rr)
	t.Cleanup(ts.Close)
	return rr, ts
}

// TestStatelessReplicas: clients of every protocol version the SDK speaks
// run commands through three stateless replicas taking turns, with no
// session affinity: 2026-07-28 without initialize, the older versions
// initialized at one replica and calling at the others. No response
// carries a session id.
func TestStatelessReplicas(t *testing.T) {
	store := mem.New(nil)
	rr, ts := replicas(t, store, 3)
	ctx := context.Background()
	for _, version := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(version, func(t *testing.T) {
			tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + mcpserver.MCPPath, MaxRetries: -1, DisableStandaloneSSE: true, HTTPClient: withToken(aliceToken)}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Errorf("negotiated %s", got)
			}
			path := "/memories/" + version + ".md"
			steps := []struct{ input, want string }{
				{`{"command":"create","path":"` + path + `","file_text":"one\n"}`, "File created successfully at: " + path},
				{`{"command":"str_replace","path":"` + path + `","old_str":"one","new_str":"two"}`, "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\ttwo\n     2\t"},
				{`{"command":"view","path":"` + path + `"}`, "Here's the content of " + path + " with line numbers:\n     1\ttwo\n     2\t"},
			}
			for _, s := range steps { // three calls: each replica answers one
				if got := call(ctx, cs, []byte(s.input)); got != (memory.Result{Text: s.want}) {
					t.Errorf("%s: %+v, want %q", s.input, got, s.want)
				}
			}
		})
	}
	if n := rr.sessions.Load(); n != 0 {
		t.Errorf("%d responses carried a session id", n)
	}
}

// TestStatelessConcurrentInserts: 32 clients, through three stateless
// replicas taking turns, insert a line into one of two shared files at the
// same moment. Every acknowledged insert is in its file exactly once, every
// refused one is absent, and the counts add up.
func TestStatelessConcurrentInserts(t *testing.T) {
	const clients = 32
	store := mem.New(nil)
	put(t, store, map[string]string{"alice/a.md": "end\n", "alice/b.md": "end\n"})
	_, ts := replicas(t, store, 3)
	ctx := context.Background()
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		sessions[i] = connectHTTP(t, ts.URL, aliceToken)
	}
	start := make(chan struct{})
	results := make([]memory.Result, clients)
	var wg sync.WaitGroup
	for i, cs := range sessions {
		wg.Go(func() {
			<-start
			results[i] = call(ctx, cs, fmt.Appendf(nil, `{"command":"insert","path":"/memories/%c.md","insert_line":0,"insert_text":"client-%02d"}`, 'a'+i%2, i))
		})
	}
	close(start)
	wg.Wait()
	lines := map[byte][]string{}
	for _, f := range []byte{'a', 'b'} {
		data, _, err := store.Get(ctx, fmt.Sprintf("alice/%c.md", f), blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		lines[f] = strings.Split(string(data), "\n")
	}
	var acked, refused int
	for i, r := range results {
		f := byte('a' + i%2)
		line := fmt.Sprintf("client-%02d", i)
		present := slices.Contains(lines[f], line)
		switch r {
		case memory.Result{Text: fmt.Sprintf("The file /memories/%c.md has been edited.", f)}:
			acked++
			if !present {
				t.Errorf("%s was acknowledged but is not in %c.md", line, f)
			}
		case memory.Result{Text: fmt.Sprintf("Error: The file /memories/%c.md was changed by another writer at the same time; no change was made. Try the command again.", f), IsError: true}:
			refused++
			if present {
				t.Errorf("%s was refused but is in %c.md", line, f)
			}
		default:
			t.Errorf("client %d: unexpected result %+v", i, r)
		}
	}
	if got := len(lines['a']) + len(lines['b']) - 4; got != acked {
		t.Errorf("%d lines inserted in all, %d acknowledged", got, acked)
	}
	t.Logf("%d clients: %d acknowledged, %d refused", clients, acked, refused)
	if acked+refused != clients || acked == 0 {
		t.Errorf("%d acknowledged + %d refused != %d", acked, refused, clients)
	}
}

// TestStatelessRefusesStreams: a stateless server has no event stream and
// no sessions to end.
func TestStatelessRefusesStreams(t *testing.T) {
	_, ts := replicas(t, mem.New(nil), 1)
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequest(method, ts.URL+mcpserver.MCPPath, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", method, resp.StatusCode)
		}
	}
}

// TestStatelessChecksMethodHeader: under protocol 2026-07-28 a request
// whose Mcp-Method header is missing or names another method than its body
// is refused before it runs (a create sent so creates nothing), and the same
// request with the right header runs.
func TestStatelessChecksMethodHeader(t *testing.T) {
	store := mem.New(nil)
	_, ts := replicas(t, store, 1)
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory",` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}},` +
		`"arguments":{"command":"create","path":"/memories/x.md","file_text":"x"}}}`
	refused := func(code int, msg string) string {
		return `{"jsonrpc":"2.0","id":1,"error":{"code":` + strconv.Itoa(code) + `,"message":"` + msg + `"}}`
	}
	for _, c := range []struct {
		header string // "": none
		status int
		body   string // "": the create's success
	}{
		{"tools/list", http.StatusBadRequest,
			refused(-32020, "header mismatch: Mcp-Method header value 'tools/list' does not match body value 'tools/call'")},
		{"", http.StatusBadRequest, refused(-32020, "missing required Mcp-Method header")},
		{"tools/call", http.StatusOK, ""},
	} {
		req, err := http.NewRequest(http.MethodPost, ts.URL+mcpserver.MCPPath, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Name", "memory")
		if c.header != "" {
			req.Header.Set("Mcp-Method", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_, statErr := store.Stat(context.Background(), "alice/x.md")
		created := statErr == nil
		if resp.StatusCode != c.status || created != (c.body == "") || c.body != "" && strings.TrimSpace(string(got)) != c.body {
			t.Errorf("Mcp-Method %q: %d %s, file created %v; want %d %s, created %v",
				c.header, resp.StatusCode, got, created, c.status, c.body, c.body == "")
		}
	}
}
