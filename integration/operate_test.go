package integration

import (
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
)

// storeGate is a TCP relay in front of a store's server, for a test to make
// that store misbehave without touching the server others share: stall
// holds what the clients send (their commands hang, in flight), close
// refuses connections and drops the open ones (the store is down), open
// listens again on the same address (it is back). It is safe for
// concurrent use.
type storeGate struct {
	t        *testing.T
	addr     string // where the clients connect
	upstream string

	mu      sync.Mutex
	held    *sync.Cond // signalled when stalled changes
	ln      net.Listener
	conns   map[net.Conn]bool
	stalled bool
	holding int // chunks held while stalled, one per connection at most
}

func newStoreGate(t *testing.T, upstream string) *storeGate {
	t.Helper()
	g := &storeGate{t: t, upstream: upstream, conns: map[net.Conn]bool{}}
	g.held = sync.NewCond(&g.mu)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g.addr = ln.Addr().String()
	g.serve(ln)
	t.Cleanup(func() { g.stall(false); g.close() })
	return g
}

// serve accepts on ln until it is closed.
func (g *storeGate) serve(ln net.Listener) {
	g.mu.Lock()
	g.ln = ln
	g.mu.Unlock()
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", g.upstream)
			if err != nil {
				client.Close()
				continue
			}
			g.mu.Lock()
			if g.ln != ln { // closed meanwhile
				g.mu.Unlock()
				client.Close()
				server.Close()
				return
			}
			g.conns[client], g.conns[server] = true, true
			g.mu.Unlock()
			go g.relay(server, client, true)
			go g.relay(client, server, false)
		}
	}()
}

// relay copies from src to dst; toServer's chunks wait while the gate is
// stalled.
func (g *storeGate) relay(dst, src net.Conn, toServer bool) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && toServer {
			g.mu.Lock()
			if g.stalled {
				g.holding++
				for g.stalled {
					g.held.Wait()
				}
				g.holding--
			}
			g.mu.Unlock()
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stall holds (on) or lets go (off) what clients send.
func (g *storeGate) stall(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stalled = on
	g.held.Broadcast()
}

// waitHolding waits until n commands are held by the stall.
func (g *storeGate) waitHolding(n int) {
	g.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		g.mu.Lock()
		h := g.holding
		g.mu.Unlock()
		if h >= n {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("%d commands held by the stalled store after 20 s, want %d", h, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// close stops listening and drops every connection.
func (g *storeGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != nil {
		g.ln.Close()
		g.ln = nil
	}
	for c := range g.conns {
		c.Close()
	}
	clear(g.conns)
}

// open listens again on the gate's address.
func (g *storeGate) open() {
	g.t.Helper()
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		g.t.Fatalf("listening again on %s: %v", g.addr, err)
	}
	g.serve(ln)
}

// spanReceiver is a local OTLP/HTTP collector that keeps the trace id and
// parent span id of every span it receives.
type spanReceiver struct {
	mu    sync.Mutex
	spans []string // "TRACE-ID PARENT-SPAN-ID NAME"
}

func (r *spanReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if req.URL.Path == "/v1/traces" {
		var m colltrace.ExportTraceServiceRequest
		if proto.Unmarshal(body, &m) == nil {
			r.mu.Lock()
			for _, rs := range m.GetResourceSpans() {
				for _, ss := range rs.GetScopeSpans() {
					for _, s := range ss.GetSpans() {
						r.spans = append(r.spans, hex.EncodeToString(s.GetTraceId())+" "+hex.EncodeToString(s.GetParentSpanId())+" "+s.GetName())
					}
				}
			}
			r.mu.Unlock()
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
}

// childrenOf returns the names of the spans received whose parent is
// spanID of traceID.
func (r *spanReceiver) childrenOf(traceID, spanID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for _, s := range r.spans {
		if name, ok := strings.CutPrefix(s, traceID+" "+spanID+" "); ok {
			names = append(names, name)
		}
	}
	return names
}

// rawPost sends one stateless MCP request (body) to endpoint with token and
// the extra headers, and returns the status, the Retry-After header and the
// body.
func rawPost(t *testing.T, endpoint, token, body string, header map[string]string) (status int, retryAfter, answer string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

// rpcResult returns the JSON-RPC message of an answer, sent as JSON or as
// one server-sent event.
func rpcResult(body string) string {
	for line := range strings.Lines(body) {
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			return strings.TrimSpace(data)
		}
	}
	return strings.TrimSpace(body)
}

// logRecord matches one key=value of a slog text line.
var logRecord = regexp.MustCompile(`(\w+)=("(?:[^"\\]|\\.)*"|\S*)`)

// accessLog returns the access log lines (msg="mcpserver: request") of a
// replica's log, each as its fields, with time, duration and remote (which
// vary) left out.
func accessLog(t *testing.T, log *os.File) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(log.Name())
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]string
	for line := range strings.Lines(string(data)) {
		rec := map[string]string{}
		for _, m := range logRecord.FindAllStringSubmatch(line, -1) {
			v := m[2]
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			}
			rec[m[1]] = v
		}
		if rec["msg"] != "mcpserver: request" {
			continue
		}
		delete(rec, "time")
		delete(rec, "duration")
		delete(rec, "remote")
		lines = append(lines, rec)
	}
	return lines
}

// TestOperatingBehindNginx (issue 31, item 3) runs two stateless replicas
// behind nginx on one Redis store reached through a storeGate, with token
// file tenants, in-flight caps of 1 per token and 1 in all, and OTLP export
// to a local receiver, and checks through nginx what operators rely on:
//   - with the store stalled and two commands of one token held in flight
//     (one on each replica, which the token's cap of 1 forces), that
//     token's requests get 429 and another token's 503, with the texts of
//     docs/spec.md and Retry-After: 1, and the held commands complete once
//     the store goes on;
//   - /readyz answers 503 on every replica while the store is down, and
//     200 again once it is back;
//   - a client's traceparent is continued: the replica's spans of its
//     command are children of the client's span, in the client's trace;
//   - every request is in an access log line with its status, tenant, MCP
//     method and trace id, and no log holds a token.
func TestOperatingBehindNginx(t *testing.T) {
	bin := buildCLI(t)
	gate := newStoreGate(t, server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR"))
	// A long read timeout: a command held by the stall waits, rather than
	// failing after go-redis's 3 s.
	storeURL := "redis://" + gate.addr + "/0?prefix=operate/" + uniquePrefix() + "&read_timeout=60s"
	store := openURL(t, strings.Replace(storeURL, gate.addr, gate.upstream, 1))
	if _, err := store.Put(t.Context(), "notes.md", []byte("shared notes\n"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}

	const aliceToken, bobToken = "alice-token-0123456789abcdef", "bob-token-0123456789abcdef01"
	tokens := filepath.Join(t.TempDir(), "tokens.json")
	if err := os.WriteFile(tokens, []byte(`{"tenants": [
		{"name": "alice", "token": "`+aliceToken+`", "prefix": ""},
		{"name": "bob", "token": "`+bobToken+`", "prefix": ""}
	]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	spans := &spanReceiver{}
	collector := httptest.NewServer(spans)
	defer collector.Close()

	var replicas []*exec.Cmd
	var ports []int
	var logs []*os.File
	for i := range 2 {
		port := freePort(t)
		cmd := exec.Command(bin, "--store", storeURL, "mcp", "--http", fmt.Sprintf("127.0.0.1:%d", port), "--stateless",
			"--token-file", tokens, "--max-in-flight", "1", "--max-token-in-flight", "1")
		cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_METRICS_EXPORTER=none")
		logs = append(logs, startProcess(t, fmt.Sprintf("replica-%d", i), cmd))
		waitHTTP(t, fmt.Sprintf("http://127.0.0.1:%d%s", port, mcpserver.HealthPath))
		replicas, ports = append(replicas, cmd), append(ports, port)
	}
	base := startNginx(t, ports)
	endpoint := base + mcpserver.MCPPath
	view := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"memory","arguments":{"command":"view","path":"/memories/notes.md"}}}`
	viewed := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Here's the content of /memories/notes.md with line numbers:\n     1\tshared notes\n     2\t"}]}}`

	// Caps. Alice's commands are sent one at a time until two are held at
	// the stalled store: a replica admits one of hers at most, so they are
	// on the two replicas, and any request of hers now gets 429, any of
	// Bob's 503, whichever replica nginx picks.
	// First a view by each on each replica, so that each has done what a
	// first command does and a view then holds one storage call.
	for range 2 {
		for _, token := range []string{aliceToken, bobToken} {
			if status, _, body := rawPost(t, endpoint, token, view, nil); status != http.StatusOK || rpcResult(body) != viewed {
				t.Fatalf("a view: %d %q, want 200 %q", status, rpcResult(body), viewed)
			}
		}
	}
	gate.stall(true)
	type answer struct {
		status int
		body   string
	}
	heldAnswers := make(chan answer, 8)
	held, refused := 0, 0
	for sent := 0; held < 2; sent++ {
		if sent == 8 {
			t.Fatalf("8 of Alice's commands sent, %d held", held)
		}
		before := gate.holdingNow()
		go func() {
			status, _, body := rawPost(t, endpoint, aliceToken, view, nil)
			heldAnswers <- answer{status, body}
		}()
		// Either it is refused (429, at once) or it is held.
		deadline := time.Now().Add(10 * time.Second)
		for gate.holdingNow() == before && len(heldAnswers) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if gate.holdingNow() > before {
			held++
			continue
		}
		select {
		case a := <-heldAnswers:
			if a.status != http.StatusTooManyRequests {
				t.Fatalf("Alice's command with one of hers in flight: %d %s, want 429", a.status, a.body)
			}
			refused++
		case <-time.After(time.Until(deadline)):
			t.Fatal("Alice's command neither held nor answered within 10 s")
		}
	}
	gate.waitHolding(2)
	tooMany := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too many requests: this token has 1 requests in flight, the limit is 1. Wait for an answer before sending more."}}` + "\n"
	serverFull := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too many requests: the server has 1 requests in flight, the limit is 1. Try again later."}}` + "\n"
	for i := range 2 { // one of each to each replica, round robin
		if status, retry, body := rawPost(t, endpoint, aliceToken, view, nil); status != http.StatusTooManyRequests || retry != "1" || body != tooMany {
			t.Errorf("Alice over her cap (%d): %d, Retry-After %q, %q\nwant 429, 1, %q", i, status, retry, body, tooMany)
		}
		if status, retry, body := rawPost(t, endpoint, bobToken, view, nil); status != http.StatusServiceUnavailable || retry != "1" || body != serverFull {
			t.Errorf("Bob over the server's cap (%d): %d, Retry-After %q, %q\nwant 503, 1, %q", i, status, retry, body, serverFull)
		}
	}
	gate.stall(false)
	for range 2 {
		select {
		case a := <-heldAnswers:
			if a.status != http.StatusOK || rpcResult(a.body) != viewed {
				t.Errorf("a held command, once the store went on: %d %q, want 200 %q", a.status, rpcResult(a.body), viewed)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a held command was not answered within 30 s of the store going on")
		}
	}

	// Readiness follows the store, on every replica.
	ready := func(want string) {
		t.Helper()
		for i := range 2 { // round robin: both replicas
			resp, err := http.Get(base + mcpserver.ReadyPath)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := fmt.Sprintf("%d %s", resp.StatusCode, b); got != want {
				t.Errorf("/readyz (%d): %q, want %q", i, got, want)
			}
		}
	}
	ready("200 ready\n")
	gate.close()
	ready("503 the store does not answer\n")
	gate.open()
	ready("200 ready\n")

	// The client's trace is continued.
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	if status, _, body := rawPost(t, endpoint, bobToken, view, map[string]string{"Traceparent": "00-" + traceID + "-" + spanID + "-01"}); status != http.StatusOK || rpcResult(body) != viewed {
		t.Errorf("Bob's traced view: %d %q, want 200 %q", status, rpcResult(body), viewed)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(spans.childrenOf(traceID, spanID)) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	// A view is telemetry's search_memory (docs/observability.md).
	if names := spans.childrenOf(traceID, spanID); fmt.Sprint(names) != "[search_memory]" {
		spans.mu.Lock()
		t.Errorf("the spans whose parent is the client's span %s of its trace %s: %q, want [search_memory]; received %q", spanID, traceID, names, spans.spans)
		spans.mu.Unlock()
	}

	// The access log: the replicas stop (SIGTERM), so that their logs are
	// complete, then every request is found in them, and no token.
	for i, r := range replicas {
		if err := r.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := r.Wait(); err != nil {
			t.Errorf("replica %d after SIGTERM: %v", i, err)
		}
	}
	count := map[string]int{}
	for i, log := range logs {
		data, _ := os.ReadFile(log.Name())
		for _, tok := range []string{aliceToken, bobToken} {
			if strings.Contains(string(data), tok) {
				t.Errorf("replica %d's log holds a token:\n%s", i, data)
			}
		}
		for _, rec := range accessLog(t, log) {
			key := fmt.Sprintf("%s %s %s %s tenant=%s mcp_method=%s trace_id=%s", rec["level"], rec["method"], rec["path"], rec["status"],
				rec["tenant"], rec["mcp_method"], rec["trace_id"])
			count[key]++
			delete(rec, "trace_id")
			want := map[string]string{"level": "INFO", "msg": "mcpserver: request", "method": "POST", "path": "/mcp", "status": rec["status"],
				"tenant": rec["tenant"], "mcp_method": "tools/call"}
			if fmt.Sprint(rec) != fmt.Sprint(want) {
				t.Errorf("replica %d: access log line %v, want %v", i, rec, want)
			}
		}
	}
	want := map[string]int{
		"INFO POST /mcp 200 tenant=alice mcp_method=tools/call trace_id=":         2 + 2, // the first views, the held ones
		"INFO POST /mcp 429 tenant=alice mcp_method=tools/call trace_id=":         refused + 2,
		"INFO POST /mcp 200 tenant=bob mcp_method=tools/call trace_id=":           2,
		"INFO POST /mcp 503 tenant=bob mcp_method=tools/call trace_id=":           2,
		"INFO POST /mcp 200 tenant=bob mcp_method=tools/call trace_id=" + traceID: 1,
	}
	if fmt.Sprint(count) != fmt.Sprint(want) {
		t.Errorf("access log lines, by kind:\n%v\nwant\n%v", count, want)
	}
}

// holdingNow returns how many commands the stall holds.
func (g *storeGate) holdingNow() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holding
}
