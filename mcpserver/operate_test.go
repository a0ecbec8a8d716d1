package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
)

// statelessPost sends one JSON-RPC request to a stateless server, as a
// client of protocol 2025-06-18 does after initialize, with extra headers.
func statelessPost(t *testing.T, url, token, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+mcpserver.MCPPath, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTPInFlightCaps: with the store's writes held, a tenant's requests
// over its cap get 429 and the server's over its cap 503, with the texts
// of docs/spec.md "Sessions over HTTP"; once the writes go on, every
// admitted request is answered and new ones are admitted again.
func TestHTTPInFlightCaps(t *testing.T) {
	gate := newGate(mem.New(nil))
	close(gate.armed)
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: gate, Tokens: teamTokens(t), Stateless: true,
		MaxTenantInFlight: 2, MaxInFlight: 3, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	create := func(name string) string {
		return toolCall(`{"command":"create","path":"/memories/` + name + `.md","file_text":"x\n"}`)
	}
	var wg sync.WaitGroup
	codes := make(chan int, 3)
	for i, token := range []string{aliceToken, aliceToken, bobToken} {
		wg.Go(func() {
			code, _ := statelessPost(t, ts.URL, token, create(string(rune('a'+i))), nil)
			codes <- code
		})
		<-gate.entered // held in the store: in flight
	}
	status, body := statelessPost(t, ts.URL, aliceToken, create("d"), nil)
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too many requests: this token has 2 requests in flight, the limit is 2. Wait for an answer before sending more."}}` + "\n"; status != 429 || body != want {
		t.Errorf("alice's third: %d %s, want 429 %s", status, body, want)
	}
	status, body = statelessPost(t, ts.URL, bobToken, create("e"), nil)
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too many requests: the server has 3 requests in flight, the limit is 3. Try again later."}}` + "\n"; status != 503 || body != want {
		t.Errorf("the fourth in all: %d %s, want 503 %s", status, body, want)
	}
	close(gate.open)
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != 200 {
			t.Errorf("an admitted request got %d", code)
		}
	}
	if status, body := statelessPost(t, ts.URL, aliceToken, create("f"), nil); status != 200 {
		t.Errorf("after the others were answered: %d %s", status, body)
	}
}

// failingStat is a store whose Stat fails as a store that does not answer.
type failingStat struct{ blob.Store }

func (failingStat) Stat(context.Context, string) (blob.Info, error) {
	return blob.Info{}, errors.New("dial tcp 10.0.0.1:6379: i/o timeout")
}

// TestReady: the readiness check answers 200 while the store answers, 503
// when it does not; it needs no token.
func TestReady(t *testing.T) {
	for _, c := range []struct {
		store  blob.Store
		status int
		body   string
	}{
		{mem.New(nil), 200, "ready\n"},
		{failingStat{mem.New(nil)}, 503, "the store does not answer\n"},
	} {
		srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: c.store, Tokens: teamTokens(t), Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, mcpserver.ReadyPath, nil))
		if rec.Code != c.status || rec.Body.String() != c.body {
			t.Errorf("%T: %d %q, want %d %q", c.store, rec.Code, rec.Body.String(), c.status, c.body)
		}
	}
}

// traceStore records the trace id in the context of each Put.
type traceStore struct {
	blob.Store
	mu     sync.Mutex
	traces []string
}

func (s *traceStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	s.mu.Lock()
	s.traces = append(s.traces, trace.SpanContextFromContext(ctx).TraceID().String())
	s.mu.Unlock()
	return s.Store.Put(ctx, key, data, c)
}

// TestAccessLogAndTrace: a request with a traceparent header runs its
// command in that trace, and the access log's line for it holds its
// method, path, status, tenant, MCP method and trace id, and no token.
func TestAccessLogAndTrace(t *testing.T) {
	store := &traceStore{Store: mem.New(nil)}
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: store, Tokens: teamTokens(t), Stateless: true, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	status, body := statelessPost(t, ts.URL, aliceToken, toolCall(`{"command":"create","path":"/memories/a.md","file_text":"x\n"}`),
		map[string]string{"Traceparent": "00-" + traceID + "-00f067aa0ba902b7-01", "Mcp-Method": "tools/call"})
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	store.mu.Lock()
	traces := store.traces
	store.mu.Unlock()
	if len(traces) == 0 || traces[0] != traceID {
		t.Errorf("the command's writes ran in the traces %v, want %s", traces, traceID)
	}
	if strings.Contains(logs.String(), aliceToken) {
		t.Errorf("the log holds the token:\n%s", logs.String())
	}
	var found bool
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if rec["msg"] != "mcpserver: request" {
			continue
		}
		found = true
		delete(rec, "time")
		delete(rec, "duration")
		delete(rec, "remote")
		want := map[string]any{"level": "INFO", "msg": "mcpserver: request", "method": "POST", "path": "/mcp", "status": float64(200),
			"tenant": "alice", "mcp_method": "tools/call", "trace_id": traceID}
		if got, _ := json.Marshal(rec); string(got) != string(must(json.Marshal(want))) {
			t.Errorf("access log: %s\nwant %s", got, must(json.Marshal(want)))
		}
	}
	if !found {
		t.Errorf("no access log line:\n%s", logs.String())
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
