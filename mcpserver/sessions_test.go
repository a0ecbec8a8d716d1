package mcpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/mcpserver"
)

// initSession posts an initialize without a session and returns the status,
// the body and the session id the server gave ("" for none).
func initSession(t *testing.T, url, token string) (int, string, string) {
	req, err := http.NewRequest(http.MethodPost, url+mcpserver.MCPPath, strings.NewReader(initialize))
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return 0, "", ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
}

func endSession(t *testing.T, url, token, id string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, url+mcpserver.MCPPath, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHTTPSessionCaps starts 12 clients of alice and 12 of bob, releases
// them together, each opening a session, against caps of 5 per tenant and
// 8 in all: exactly 8 sessions open, neither tenant has more than 5, and
// every other client gets the whole refusal of docs/spec.md "Sessions over
// HTTP" (429 for a tenant's cap, 503 for the server's). The sessions that
// opened still serve, and ending one makes room for one more.
func TestHTTPSessionCaps(t *testing.T) {
	const perTenant, total, clients = 5, 8, 12
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), Tokens: teamTokens(t), Logger: quiet,
		MaxTenantSessions: perTenant, MaxSessions: total})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	tenantFull := fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too many sessions: this token has %d open sessions, the limit is %d. `+
		`End a session you no longer use (DELETE with its Mcp-Session-Id), or reuse one; an idle session ends after 30m0s."}}`+"\n", perTenant, perTenant)
	serverFull := fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too many sessions: the server has %d open sessions, the limit is %d. `+
		`Try again later; an idle session ends after 30m0s."}}`+"\n", total, total)

	type result struct {
		token, body, id string
		code            int
	}
	results := make([]result, 2*clients)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range results {
		token := aliceToken
		if i%2 == 1 {
			token = bobToken
		}
		wg.Go(func() {
			<-start
			code, body, id := initSession(t, ts.URL, token)
			results[i] = result{token, body, id, code}
		})
	}
	close(start)
	wg.Wait()

	opened := map[string][]string{}
	var tooMany, unavailable int
	for i, r := range results {
		switch {
		case r.code == http.StatusOK && r.id != "":
			opened[r.token] = append(opened[r.token], r.id)
		case r.code == http.StatusTooManyRequests && r.body == tenantFull && r.id == "":
			tooMany++
		case r.code == http.StatusServiceUnavailable && r.body == serverFull && r.id == "":
			unavailable++
		default:
			t.Errorf("client %d: %d %q (session %q)", i, r.code, r.body, r.id)
		}
	}
	a, b := len(opened[aliceToken]), len(opened[bobToken])
	t.Logf("%d clients: %d sessions opened (alice %d, bob %d), %d refused with 429, %d with 503", len(results), a+b, a, b, tooMany, unavailable)
	if a+b != total || a > perTenant || b > perTenant || a+b+tooMany+unavailable != len(results) {
		t.Fatalf("opened alice %d, bob %d; want %d in all, at most %d each", a, b, total, perTenant)
	}
	// The open sessions serve.
	view := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories"}]}}`
	for _, id := range opened[aliceToken] {
		if code, body := rawPost(t, ts.URL, aliceToken, id, toolCall(`{"command":"view","path":"/memories"}`)); code != http.StatusOK || strings.TrimSpace(body) != view {
			t.Errorf("a call in session %s: %d %s", id, code, body)
		}
	}
	// A full server refuses; ending a session makes room for one more.
	if code, body, _ := initSession(t, ts.URL, carolToken); code != http.StatusServiceUnavailable || body != serverFull {
		t.Errorf("carol at the server's cap: %d %q", code, body)
	}
	if code := endSession(t, ts.URL, bobToken, opened[bobToken][0]); code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	if code, _, id := initSession(t, ts.URL, carolToken); code != http.StatusOK || id == "" {
		t.Errorf("carol after a session ended: %d, session %q", code, id)
	}
	if code, body, _ := initSession(t, ts.URL, carolToken); code != http.StatusServiceUnavailable || body != serverFull {
		t.Errorf("carol at the server's cap again: %d %q", code, body)
	}
}

// TestHTTPTenantSessionCap fills alice's cap of 2: her third session gets
// the whole 429 refusal, and bob, under the same server, still opens his.
func TestHTTPTenantSessionCap(t *testing.T) {
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), Tokens: teamTokens(t), Logger: quiet, MaxTenantSessions: 2})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for range 2 {
		if code, body, id := initSession(t, ts.URL, aliceToken); code != http.StatusOK || id == "" {
			t.Fatalf("alice: %d %s", code, body)
		}
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too many sessions: this token has 2 open sessions, the limit is 2. ` +
		`End a session you no longer use (DELETE with its Mcp-Session-Id), or reuse one; an idle session ends after 30m0s."}}` + "\n"
	if code, body, id := initSession(t, ts.URL, aliceToken); code != http.StatusTooManyRequests || body != want || id != "" {
		t.Errorf("alice's third session: %d %q %q\nwant 429 %q", code, body, id, want)
	}
	if code, body, id := initSession(t, ts.URL, bobToken); code != http.StatusOK || id == "" {
		t.Errorf("bob: %d %s", code, body)
	}
}
