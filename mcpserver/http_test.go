package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

const (
	aliceToken = "alice-token-0123456789"
	bobToken   = "bob-token-0123456789ab"
	carolToken = "carol-token-0123456789"
)

// teamTokens: alice and bob each own a prefix; carol reads bob's, read-only.
func teamTokens(t *testing.T) *mcpserver.Tokens {
	t.Helper()
	ts, err := mcpserver.ParseTokens([]byte(`{"tenants": [
		{"name": "alice", "token": "` + aliceToken + `", "prefix": "alice"},
		{"name": "bob", "token": "` + bobToken + `", "prefix": "bob"},
		{"name": "carol", "token": "` + carolToken + `", "prefix": "bob", "readonly": true}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

var quiet = slog.New(slog.DiscardHandler)

// put writes files (key -> content) to s.
func put(t *testing.T, s blob.Store, files map[string]string) {
	t.Helper()
	for k, v := range files {
		if _, err := s.Put(context.Background(), k, []byte(v), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
}

type object struct{ data, version string }

// snapshot returns every key of s under prefix with its content and version.
func snapshot(t *testing.T, s blob.Store, prefix string) map[string]object {
	t.Helper()
	ctx := context.Background()
	infos, err := blob.ListAll(ctx, s, prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]object{}
	for _, info := range infos {
		data, got, err := s.Get(ctx, info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		out[info.Key] = object{string(data), got.Version}
	}
	return out
}

func contents(snap map[string]object) map[string]string {
	out := map[string]string{}
	for k, o := range snap {
		out[k] = o.data
	}
	return out
}

// rawPost sends one JSON-RPC body to the MCP endpoint and returns the
// status and the body.
func rawPost(t *testing.T, url, token, session, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+mcpserver.MCPPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func toolCall(input string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory","arguments":` + input + `}}`
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestHTTPRefusals sends what a server must refuse: no token, a wrong
// token, another tenant's session, an oversized request, malformed
// JSON-RPC. Each gets a clear error, and the store does not change.
func TestHTTPRefusals(t *testing.T) {
	store := mem.New(nil)
	put(t, store, map[string]string{"alice/notes.md": "alice's notes\n", "bob/secret.md": "bob's secret: 42\n"})
	before := snapshot(t, store, "")
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: store, Tokens: teamTokens(t), MaxRequestBytes: 4096, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	alice := connectHTTP(t, ts.URL, aliceToken)
	create := toolCall(`{"command":"create","path":"/memories/x.md","file_text":"x"}`)

	for _, tc := range []struct {
		name, token, session, body string
		status                     int
		want                       string
	}{
		{"no token", "", "", create, 401, "no bearer token\n"},
		{"no token, initialize", "", "", initialize, 401, "no bearer token\n"},
		{"a wrong token", "alice-token-0123456788", "", create, 401, "invalid token\n"},
		{"a token's prefix", aliceToken[:len(aliceToken)-1], "", create, 401, "invalid token\n"},
		{"bob's token on alice's session", bobToken, alice.ID(), create, 403, "session user mismatch\n"},
		{"carol's token on alice's session", carolToken, alice.ID(), create, 403, "session user mismatch\n"},
		{"an unknown session", aliceToken, "NOSUCHSESSION", create, 404, "session not found\n"},
		{"oversized", aliceToken, alice.ID(), toolCall(`{"command":"create","path":"/memories/big.md","file_text":"` + strings.Repeat("a", 5000) + `"}`),
			413, "request body exceeds 4096 bytes\n"},
		{"not JSON", aliceToken, alice.ID(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory","arguments":{"command":"create",`,
			400, "malformed payload: unmarshaling jsonrpc message: unexpected EOF\n"},
		{"not JSON-RPC", aliceToken, alice.ID(), `hello`, 400, "malformed payload: unmarshaling jsonrpc message: json: invalid character 'h' looking for beginning of value: hello\n"},
		{"an empty batch", aliceToken, alice.ID(), `[]`, 400, "malformed payload: empty batch\n"},
		{"an unknown method", aliceToken, alice.ID(), `{"jsonrpc":"2.0","id":7,"method":"no/such"}`, 400, "JSON RPC not handled: \"no/such\" unsupported\n"},
		{"an unknown tool", aliceToken, alice.ID(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
			200, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool \"nope\""}}`},
		{"params not an object", aliceToken, alice.ID(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":[1]}`,
			200, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"handling 'tools/call': invalid params: unmarshaling \"[1]\" into a *mcp.CallToolParamsRaw: json: cannot unmarshal \"[1]\" into Go value of type mcp.CallToolParamsRaw"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := rawPost(t, ts.URL, tc.token, tc.session, tc.body)
			if status != tc.status || body != tc.want {
				t.Errorf("got %d %q, want %d %q", status, body, tc.status, tc.want)
			}
		})
	}
	// The golden inputs that are not JSON cannot be a tool call's arguments:
	// the whole request is malformed, and refused before any handler.
	for _, c := range memorytest.Cases() {
		if json.Valid([]byte(c.Input)) {
			continue
		}
		status, body := rawPost(t, ts.URL, aliceToken, alice.ID(), toolCall(c.Input))
		if status != 400 || !strings.HasPrefix(body, "malformed payload: unmarshaling jsonrpc message: ") {
			t.Errorf("%s: arguments %q: got %d %q, want 400 malformed payload", c.Name, c.Input, status, body)
		}
	}
	// A basic-auth header is no bearer token either.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+mcpserver.MCPPath, strings.NewReader(create))
	req.SetBasicAuth("alice", aliceToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer realm="cloudmem"` {
		t.Errorf("basic auth: got %d, WWW-Authenticate %q; want 401 and a Bearer challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if diff := diff(before, snapshot(t, store, "")); diff != "" {
		t.Errorf("the store changed:\n%s", diff)
	}
	// Alice's session still works, and sees her own notes only.
	if got := call(t.Context(), alice, []byte(`{"command":"view","path":"/memories"}`)); got != (memory.Result{
		Text: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n14B\t/memories\n14B\t/memories/notes.md"}) {
		t.Errorf("alice's view: %+v", got)
	}
}

func diff(before, after map[string]object) string {
	var b strings.Builder
	keys := maps.Keys(before)
	all := slices.Sorted(keys)
	for k := range after {
		if _, ok := before[k]; !ok {
			all = append(all, k)
		}
	}
	for _, k := range all {
		if before[k] != after[k] {
			fmt.Fprintf(&b, "  %q: %+v -> %+v\n", k, before[k], after[k])
		}
	}
	return b.String()
}

// TestHTTPTenancy runs every command of tenant alice against tenant bob's
// paths (as bob names them, and every spelling that tries to climb out of
// alice's part of the store). Each answer must be the one alice would get if
// bob did not exist (a handler over alice's files alone, in lockstep), no
// answer may hold bob's data, and bob's objects must not change. Carol, who
// reads bob's part read-only, sees bob's files and changes nothing.
func TestHTTPTenancy(t *testing.T) {
	ctx := t.Context()
	store := mem.New(nil)
	bobFiles := map[string]string{"bob/secret.md": "bob's secret: 42\n", "bob/d/x.md": "bob's x\n"}
	aliceFiles := map[string]string{"mine.md": "alice's note\n", "dir/a.md": "a\n"}
	put(t, store, bobFiles)
	for k, v := range aliceFiles {
		put(t, store, map[string]string{"alice/" + k: v})
	}
	bobBefore := snapshot(t, store, "bob/")
	ref := mem.New(nil) // alice's files alone, as if bob did not exist
	put(t, ref, aliceFiles)
	refH, err := memory.New(ref, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: store, Tokens: teamTokens(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	alice := connectHTTP(t, ts.URL, aliceToken)

	bobPaths := []string{"/memories/secret.md", "/memories/d", "/memories/d/x.md", "/memories/bob/secret.md",
		"/memories/../bob/secret.md", "/memories/%2e%2e/bob/secret.md", `/memories/..\bob\secret.md`, "/memories/../bob",
		"/memories/.cloudmem/../../bob/secret.md", "/bob/secret.md", "/memories/../../bob/secret.md"}
	var inputs []string
	for _, p := range bobPaths {
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		inputs = append(inputs,
			`{"command":"view","path":`+q(p)+`}`,
			`{"command":"view","path":`+q(p)+`,"view_range":[1,-1]}`,
			`{"command":"str_replace","path":`+q(p)+`,"old_str":"42","new_str":"stolen"}`,
			`{"command":"insert","path":`+q(p)+`,"insert_line":0,"insert_text":"alice was here"}`,
			`{"command":"delete","path":`+q(p)+`}`,
			`{"command":"rename","old_path":`+q(p)+`,"new_path":"/memories/stolen.md"}`,
			`{"command":"rename","old_path":"/memories/dir","new_path":`+q(p+"-moved")+`}`,
		)
	}
	for _, p := range bobPaths { // creating comes last: it may make a file of alice's at a path of bob's name
		b, _ := json.Marshal(p)
		inputs = append(inputs, `{"command":"create","path":`+string(b)+`,"file_text":"alice's"}`)
	}
	inputs = append(inputs, `{"command":"view","path":"/memories"}`)
	for _, in := range inputs {
		got := call(ctx, alice, []byte(in))
		want := refH.Execute(ctx, []byte(in))
		want.Err = nil
		if got.Text != want.Text || got.IsError != want.IsError || got.Image != nil {
			t.Errorf("alice: %s\n got: %+v\nwant: %+v", in, got, want)
		}
		if strings.Contains(got.Text, "bob's") || strings.Contains(got.Text, "42") {
			t.Errorf("alice: %s: the answer holds bob's data: %q", in, got.Text)
		}
	}
	// Two answers written out, so that the comparison above cannot pass vacuously.
	if got := call(ctx, alice, []byte(`{"command":"view","path":"/memories/d/x.md"}`)); got.Text != "Error: The path /memories/d/x.md does not exist. Please provide a valid path." {
		t.Errorf("alice's view of bob's file: %q", got.Text)
	}
	if got := call(ctx, alice, []byte(`{"command":"delete","path":"/memories/../bob"}`)); got.Text != "Error: Path /memories/../bob would escape /memories directory" {
		t.Errorf("alice's delete of bob's directory: %q", got.Text)
	}
	if d := diff(bobBefore, snapshot(t, store, "bob/")); d != "" {
		t.Errorf("bob's objects changed:\n%s", d)
	}
	// The handler's own bookkeeping (under .cloudmem) differs between two
	// stores (a count file holds a random token) and is not a memory file.
	aliceAfter := map[string]string{}
	for k, v := range contents(snapshot(t, store, "alice/")) {
		if !blob.IsReserved(k) {
			aliceAfter[strings.TrimPrefix(k, "alice/")] = v
		}
	}
	refFiles := contents(snapshot(t, ref, ""))
	maps.DeleteFunc(refFiles, func(k, _ string) bool { return blob.IsReserved(k) })
	if want := refFiles; !maps.Equal(aliceAfter, want) {
		t.Errorf("alice's files: %q, want %q", aliceAfter, want)
	}

	// Resources: alice lists and reads only her own.
	res, err := alice.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var listed, want []string
	for _, r := range res.Resources {
		listed = append(listed, r.URI)
	}
	for _, k := range slices.Sorted(maps.Keys(refFiles)) {
		want = append(want, mcpserver.URIOf(memory.PathOf(k)))
	}
	if !slices.Equal(listed, want) {
		t.Errorf("alice lists %q, want %q", listed, want)
	}
	for _, uri := range []string{"memory:///memories/d/x.md", "memory:///memories/../bob/secret.md", "memory:///memories/%2e%2e/bob/secret.md", "memory:///bob/secret.md"} {
		_, err := alice.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound {
			t.Errorf("alice reads %s: %v, want resource not found", uri, err)
		}
	}

	// Carol reads bob's part, and can change nothing.
	carol := connectHTTP(t, ts.URL, carolToken)
	if got := call(ctx, carol, []byte(`{"command":"view","path":"/memories/secret.md"}`)); got.Text != "Here's the content of /memories/secret.md with line numbers:\n     1\tbob's secret: 42\n     2\t" {
		t.Errorf("carol's view: %q", got.Text)
	}
	for _, cmd := range []string{
		`{"command":"create","path":"/memories/c.md","file_text":"c"}`,
		`{"command":"str_replace","path":"/memories/secret.md","old_str":"42","new_str":"0"}`,
		`{"command":"insert","path":"/memories/secret.md","insert_line":0,"insert_text":"c"}`,
		`{"command":"delete","path":"/memories/secret.md"}`,
		`{"command":"rename","old_path":"/memories/secret.md","new_path":"/memories/s.md"}`,
	} {
		var in struct{ Command string }
		json.Unmarshal([]byte(cmd), &in)
		want := memory.Result{Text: "Error: The memory directory is read-only: " + in.Command + " is not allowed", IsError: true}
		if got := call(ctx, carol, []byte(cmd)); got != want {
			t.Errorf("carol: %s: %+v, want %+v", cmd, got, want)
		}
	}
	if d := diff(bobBefore, snapshot(t, store, "bob/")); d != "" {
		t.Errorf("bob's objects changed:\n%s", d)
	}
}

// TestHTTPConcurrentInserts: 16 clients, each its own session, insert a
// line into one file at the same moment (a barrier). Every acknowledged
// insert is in the file exactly once, every refused one is absent, and the
// two counts add up to 16.
func TestHTTPConcurrentInserts(t *testing.T) {
	const clients = 16
	store := mem.New(nil)
	put(t, store, map[string]string{"alice/log.md": "end\n"})
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: store, Tokens: teamTokens(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
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
			results[i] = call(context.Background(), cs, fmt.Appendf(nil, `{"command":"insert","path":"/memories/log.md","insert_line":0,"insert_text":"client-%02d"}`, i))
		})
	}
	close(start)
	wg.Wait()

	data, _, err := store.Get(context.Background(), "alice/log.md", blob.MaxObjectBytes)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var acked, refused int
	for i, r := range results {
		line := fmt.Sprintf("client-%02d", i)
		present := slices.Contains(lines, line)
		switch r {
		case memory.Result{Text: "The file /memories/log.md has been edited."}:
			acked++
			if !present {
				t.Errorf("%s was acknowledged but is not in the file", line)
			}
		case memory.Result{Text: "Error: The file /memories/log.md was changed by another writer at the same time; no change was made. Try the command again.", IsError: true}:
			refused++
			if present {
				t.Errorf("%s was refused but is in the file", line)
			}
		default:
			t.Errorf("client %d: unexpected result %+v", i, r)
		}
	}
	if want := acked + 2; len(lines) != want || lines[acked] != "end" || lines[acked+1] != "" {
		t.Errorf("the file has %d lines, want %d acknowledged lines then \"end\\n\":\n%s", len(lines), want, data)
	}
	t.Logf("%d clients: %d acknowledged, %d refused, %d present", clients, acked, refused, len(lines)-2)
	if acked+refused != clients {
		t.Errorf("%d acknowledged + %d refused != %d", acked, refused, clients)
	}
}

// gateStore holds every Put until open is closed, once armed, and tells
// entered each time a Put arrives. It hides the inner store's Rename, so
// that a rename is several storage calls.
type gateStore struct {
	blob.Store
	armed   chan struct{} // closed: Puts wait
	open    chan struct{} // closed: Puts go on
	entered chan string
}

func newGate(s blob.Store) *gateStore {
	return &gateStore{Store: s, armed: make(chan struct{}), open: make(chan struct{}), entered: make(chan string, 100)}
}

func (g *gateStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	select {
	case <-g.armed:
		g.entered <- key
		<-g.open
	default:
	}
	return g.Store.Put(ctx, key, data, c)
}

// TestHTTPDisconnectMidCommand: a client starts a directory rename (a copy
// of each file, then deletes) and goes away while the first copy is being
// written. At every moment each file is at its old path or its new one,
// with its content; and the command runs to its end.
func TestHTTPDisconnectMidCommand(t *testing.T) {
	base := mem.New(nil)
	files := map[string]string{"d/a.md": "a\n", "d/b.md": "b\n", "d/c/e.md": "e\n"}
	put(t, base, files)
	gate := newGate(base)
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: gate, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	cs := connectHTTP(t, ts.URL, "")
	close(gate.armed)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan memory.Result)
	go func() {
		done <- call(ctx, cs, []byte(`{"command":"rename","old_path":"/memories/d","new_path":"/memories/n"}`))
	}()
	<-gate.entered // the first copy is under way
	cancel()       // the client goes away
	if r := <-done; !strings.HasPrefix(r.Text, "MCP error: ") {
		t.Errorf("the cancelled call returned %+v", r)
	}
	cs.Close()
	check := func() (moved int) {
		got := contents(snapshot(t, base, ""))
		for k, v := range files {
			nk := "n" + strings.TrimPrefix(k, "d")
			old, atOld := got[k]
			nu, atNew := got[nk]
			switch {
			case atOld && atNew && old == v && nu == v: // copied, source not yet deleted
			case atOld && !atNew && old == v:
			case atNew && !atOld && nu == v:
				moved++
			default:
				t.Fatalf("%s: old %q (%v), new %q (%v); want one of them with %q", k, old, atOld, nu, atNew, v)
			}
		}
		return moved
	}
	check()
	close(gate.open)
	deadline := time.Now().Add(10 * time.Second)
	for check() != len(files) {
		if time.Now().After(deadline) {
			t.Fatalf("the rename did not finish: %q", contents(snapshot(t, base, "")))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got, want := len(snapshot(t, base, "")), len(files); got != want {
		t.Errorf("%d objects, want %d", got, want)
	}
}

// TestHTTPGracefulShutdown: a shutdown that begins while a command is in
// flight reports not healthy, takes no new request, lets the command finish
// and its answer reach the client, and then Serve returns nil.
func TestHTTPGracefulShutdown(t *testing.T) {
	base := mem.New(nil)
	put(t, base, map[string]string{"a.md": "old\n"})
	gate := newGate(base)
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: gate, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- srv.Serve(ctx, ln, nil) }()
	cs := connectHTTP(t, url, "")
	health := func() (int, string) {
		resp, err := http.Get(url + mcpserver.HealthPath)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := health(); code != 200 || body != "ok\n" {
		t.Fatalf("health: %d %q", code, body)
	}
	close(gate.armed)
	done := make(chan memory.Result)
	go func() {
		done <- call(context.Background(), cs, []byte(`{"command":"str_replace","path":"/memories/a.md","old_str":"old","new_str":"new"}`))
	}()
	<-gate.entered
	stop() // SIGTERM
	time.Sleep(50 * time.Millisecond)
	if code, _ := health(); code == 200 {
		t.Errorf("healthy while shutting down")
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned %v with a command in flight", err)
	default:
	}
	close(gate.open)
	want := memory.Result{Text: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tnew\n     2\t"}
	if got := <-done; got != want {
		t.Errorf("the command in flight: %+v, want %+v", got, want)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if got := contents(snapshot(t, base, "")); got["a.md"] != "new\n" {
		t.Errorf("a.md = %q", got["a.md"])
	}
}

// TestServeNeedsTokensBeyondLoopback: without tokens, Serve refuses every
// address but loopback; with them, it serves there.
func TestServeNeedsTokensBeyondLoopback(t *testing.T) {
	open, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	err = open.Serve(context.Background(), ln, nil)
	if !errors.Is(err, mcpserver.ErrNoAuth) {
		t.Errorf("Serve without tokens on %s: %v, want ErrNoAuth", ln.Addr(), err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Errorf("the refused listener still accepts")
	}

	authed, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), Tokens: teamTokens(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, err = net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- authed.Serve(ctx, ln, nil) }()
	cs := connectHTTP(t, fmt.Sprintf("http://127.0.0.1:%d", port), aliceToken)
	if got := call(ctx, cs, []byte(`{"command":"view","path":"/memories"}`)); got.IsError {
		t.Errorf("view: %+v", got)
	}
	cs.Close()
	stop()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestHealth(t *testing.T) {
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), Tokens: teamTokens(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/healthz", 200, "ok\n"},
		{"POST", "/healthz", 405, "method not allowed\n"},
		{"GET", "/", 404, "404 page not found\n"},
		{"GET", "/mcp/x", 404, "404 page not found\n"},
	} {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status || w.Body.String() != tc.body {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, w.Code, w.Body.String(), tc.status, tc.body)
		}
	}
}

// TestRunWaitsForCommands: Run asked to stop (SIGTERM in "cloudmem mcp")
// while a command is in flight returns only once the command is done, so
// that the process exits with every file at its new state.
func TestRunWaitsForCommands(t *testing.T) {
	base := mem.New(nil)
	put(t, base, map[string]string{"a.md": "old\n"})
	gate := newGate(base)
	h, err := memory.New(gate, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(h, &mcpserver.Options{Logger: quiet})
	st, ct := mcp.NewInMemoryTransports()
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan error)
	go func() { ran <- srv.Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	close(gate.armed)
	go call(context.Background(), cs, []byte(`{"command":"str_replace","path":"/memories/a.md","old_str":"old","new_str":"new"}`))
	<-gate.entered
	stop()
	select {
	case err := <-ran:
		t.Fatalf("Run returned %v with a command in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(gate.open)
	select {
	case err := <-ran:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	if got := contents(snapshot(t, base, "")); got["a.md"] != "new\n" {
		t.Errorf("a.md = %q, want the new content", got["a.md"])
	}
}

// TestClosedServerRefuses: after Close, a command gets an error result and
// changes nothing.
func TestClosedServerRefuses(t *testing.T) {
	store := mem.New(nil)
	h, err := memory.New(store, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(h, &mcpserver.Options{Logger: quiet})
	cs := connectInMemory(t, srv)
	srv.Close()
	want := memory.Result{Text: "Error: The memory server is shutting down; no change was made. Try the command again.", IsError: true}
	if got := call(t.Context(), cs, []byte(`{"command":"create","path":"/memories/a.md","file_text":"a"}`)); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if n := len(snapshot(t, store, "")); n != 0 {
		t.Errorf("%d objects after a refused create", n)
	}
	if err := srv.Wait(t.Context()); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

// TestHTTPTenantStoreFails: a tenant whose memory cannot be opened gets
// 503 and no detail of why; a later request opens it again.
func TestHTTPTenantStoreFails(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Tokens: teamTokens(t), Logger: quiet,
		Open: func(context.Context, *mcpserver.Tenant) (*memory.Handler, error) {
			if fail.Load() {
				return nil, errors.New("dial tcp 10.0.0.7:6379: connection refused (password=hunter2)")
			}
			return memory.New(mem.New(nil), memory.Options{})
		}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	if status, body := rawPost(t, ts.URL, aliceToken, "", initialize); status != 503 || body != "the memory store is not available\n" {
		t.Errorf("got %d %q", status, body)
	}
	fail.Store(false)
	if r := call(t.Context(), connectHTTP(t, ts.URL, aliceToken), []byte(`{"command":"view","path":"/memories"}`)); r.IsError {
		t.Errorf("after the store came back: %+v", r)
	}
}
