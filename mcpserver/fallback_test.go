package mcpserver_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/mcpserver"
)

// TestFallback: HTTPOptions.Fallback serves every path but the MCP endpoint
// and the health check, which stay the server's.
func TestFallback(t *testing.T) {
	fallback := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "console %s\n", r.URL.Path) })
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), Tokens: teamTokens(t), Logger: quiet, Fallback: fallback})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/healthz", 200, "ok\n"},
		{"GET", "/", 200, "console /\n"},
		{"POST", "/restore", 200, "console /restore\n"},
		{"GET", "/mcp/x", 200, "console /mcp/x\n"},
		{"POST", "/mcp", 401, "no bearer token\n"},
	} {
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status || w.Body.String() != tc.body {
			t.Errorf("%s %s: %d %q, want %d %q", tc.method, tc.path, w.Code, w.Body.String(), tc.status, tc.body)
		}
	}
}
