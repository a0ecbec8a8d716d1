package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

// wireCases splits the golden cases into those whose input can be the
// arguments of a tools/call request (any JSON value) and those whose input
// is not JSON at all (a blank line, bytes that do not parse): no MCP client
// can send those, and a server that receives one answers with a JSON-RPC
// parse error (TestHTTPMalformedJSONRPC).
func wireCases(t *testing.T) []memorytest.Case {
	t.Helper()
	var sendable []memorytest.Case
	var unsendable []string
	for _, c := range memorytest.Cases() {
		if json.Valid([]byte(c.Input)) {
			sendable = append(sendable, c)
		} else {
			unsendable = append(unsendable, c.Name)
		}
	}
	if len(sendable) < 100 {
		t.Fatalf("only %d golden cases can go over MCP", len(sendable))
	}
	t.Logf("%d golden cases over MCP; %d are not JSON and cannot be tool arguments: %q", len(sendable), len(unsendable), unsendable)
	return sendable
}

func newMem(t *testing.T) blob.Store { return mem.New(nil) }

// call runs one memory command through a client session, and turns its
// result back into the handler's Result. A protocol error becomes a result
// no golden case expects.
func call(ctx context.Context, cs *mcp.ClientSession, input []byte) memory.Result {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolName, Arguments: json.RawMessage(input)})
	if err != nil {
		return memory.Result{Text: "MCP error: " + err.Error()}
	}
	r, err := mcpserver.ResultOf(res)
	if err != nil {
		return memory.Result{Text: "bad MCP result: " + err.Error()}
	}
	return r
}

// connectInMemory serves srv over the SDK's in-memory transport and returns
// a client session to it, closed at the end of the test.
func connectInMemory(t testing.TB, srv *mcpserver.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// connectHTTP connects a client to an HTTP server at url (no token unless
// one is given), closed at the end of the test.
func connectHTTP(t testing.TB, url, token string) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url + mcpserver.MCPPath, MaxRetries: -1, DisableStandaloneSSE: true}
	if token != "" {
		tr.HTTPClient = withToken(token)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestSpecInMemory runs the golden cases through MCP over the SDK's
// in-memory transport: every text, image and error flag as the handler
// gives it, and the store as the contract leaves it.
func TestSpecInMemory(t *testing.T) {
	memorytest.RunThrough(t, wireCases(t), newMem, func(ctx context.Context, h *memory.Handler, input []byte) memory.Result {
		return call(ctx, connectInMemory(t, mcpserver.New(h, nil)), input)
	})
}

// TestSpecHTTP runs the golden cases through MCP over streamable HTTP.
func TestSpecHTTP(t *testing.T) {
	memorytest.RunThrough(t, wireCases(t), newMem, func(ctx context.Context, h *memory.Handler, input []byte) memory.Result {
		srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{
			Open: func(context.Context, *mcpserver.Tenant) (*memory.Handler, error) { return h, nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		return call(ctx, connectHTTP(t, ts.URL, ""), input)
	})
}
