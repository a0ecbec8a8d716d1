package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/storeurl"
)

// cliProcess returns the command that runs this test binary as the cloudmem
// program on args (see TestMain), over real OS pipes.
func cliProcess(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(t.Context(), os.Args[0])
	cmd.Env = append(os.Environ(), processArgs+"="+strings.Join(args, "\x1f"))
	return cmd
}

func callTool(ctx context.Context, cs *mcp.ClientSession, input []byte) memory.Result {
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

// TestMCPStdioSpec runs the golden cases through "cloudmem --store DIR mcp"
// in a process of its own, over its stdin and stdout, as Claude Code runs
// it: every text and error flag as the handler gives it, and the directory
// as the contract leaves it. The cases that configure the handler (limits,
// a wrapped store) cannot reach another process and run in package
// mcpserver; so do those whose input is not JSON (no client can send them),
// and the one that fills the store with 2,000 files (seconds of writes to a
// directory, for a text the handler makes in-process either way).
func TestMCPStdioSpec(t *testing.T) {
	dir := t.TempDir()
	server := cliProcess(t, "--store", dir, "mcp")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cases []memorytest.Case
	for _, c := range memorytest.Cases() {
		if c.Wrap == nil && reflect.ValueOf(c.Options).IsZero() && json.Valid([]byte(c.Input)) && len(c.Files) <= 100 {
			cases = append(cases, c)
		}
	}
	if len(cases) < 300 {
		t.Fatalf("only %d cases", len(cases))
	}
	t.Logf("%d golden cases through the process", len(cases))
	newStore := func(t *testing.T) blob.Store {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".cloudmem-lock") { // the file store's own lock stays
				if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
		}
		s, err := storeurl.Open(t.Context(), dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	memorytest.RunThrough(t, cases, newStore, func(ctx context.Context, _ *memory.Handler, input []byte) memory.Result {
		return callTool(ctx, cs, input)
	})
	checkSearchTool(t, cs)
	// Closing stdin ends the server, and it exits 0.
	if err := cs.Close(); err != nil {
		t.Errorf("the server's exit: %v", err)
	}
}

// checkSearchTool checks that the server of cs offers the memory tool and
// memory_search, and that a file the memory tool wrote is found by the
// next search, with the whole text of docs/spec.md "Search".
func checkSearchTool(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := t.Context()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{mcpserver.ToolName, mcpserver.SearchToolName}; !slices.Equal(names, want) {
		t.Errorf("tools %q, want %q", names, want)
	}
	if r := callTool(ctx, cs, []byte(`{"command":"create","path":"/memories/zz-search.md","file_text":"the zebra note\n"}`)); r.IsError {
		t.Fatal(r.Text)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.SearchToolName,
		Arguments: json.RawMessage(`{"query":"zebra","path":"/memories/zz-search.md"}`)})
	if err != nil {
		t.Fatal(err)
	}
	const want = "Found 1 file for \"zebra\" in /memories/zz-search.md:\n/memories/zz-search.md (line 1)\n     1\tthe «zebra» note"
	if len(res.Content) != 1 || res.IsError {
		t.Fatalf("memory_search: %+v", res)
	}
	if text, ok := res.Content[0].(*mcp.TextContent); !ok || text.Text != want {
		t.Errorf("memory_search: %+v\nwant the text %q", res.Content[0], want)
	}
}

// TestMCPHTTPProcess runs "cloudmem mcp --http 127.0.0.1:0" with a token
// from the environment: a client without the token is refused, one with it
// works, and SIGTERM ends the process cleanly.
func TestMCPHTTPProcess(t *testing.T) {
	dir := t.TempDir()
	const token = "process-token-0123456789"
	server := cliProcess(t, "--store", dir, "mcp", "--http", "127.0.0.1:0")
	server.Env = append(server.Env, mcpTokenEnv+"="+token)
	stderr, err := server.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var url string
	for url == "" && lines.Scan() {
		if _, rest, ok := strings.Cut(lines.Text(), " url="); ok {
			url, _, _ = strings.Cut(rest, " ")
		}
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, mcpserver.MCPPath) {
		server.Process.Kill()
		t.Fatalf("no URL on stderr (got %q)", url)
	}
	rest := make(chan string)
	go func() { b, _ := io.ReadAll(stderr); rest <- string(b) }()

	ctx := t.Context()
	_, err = mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("a client without the token connected: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true, HTTPClient: tokenClient(token)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := memory.Result{Text: "File created successfully at: /memories/a.md"}
	if got := callTool(ctx, cs, []byte(`{"command":"create","path":"/memories/a.md","file_text":"over HTTP\n"}`)); got != want {
		t.Errorf("create: %+v, want %+v", got, want)
	}
	checkSearchTool(t, cs)
	cs.Close()
	if err := server.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error)
	go func() { exited <- server.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v; stderr: %s", err, <-rest)
		}
	case <-time.After(20 * time.Second):
		server.Process.Kill()
		t.Fatal("the server did not stop on SIGTERM")
	}
	if log := <-rest; !strings.Contains(log, `msg="shut down"`) {
		t.Errorf("stderr after SIGTERM: %q", log)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a.md")); err != nil || string(data) != "over HTTP\n" {
		t.Errorf("a.md: %q, %v", data, err)
	}
}

// TestMCPCommandErrors: what "cloudmem mcp" refuses, and how it says so.
func TestMCPCommandErrors(t *testing.T) {
	dir := t.TempDir()
	badTokens := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(badTokens, []byte(`{"tenants": [{"name": "a", "token": "short"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stderr string
	}{
		{"a token file without --http", []string{"--store", dir, "mcp", "--token-file", badTokens}, nil, exitUsage,
			"cloudmem mcp: --token-file, --tls-cert, --tls-key and --oauth-* need --http\nUsage: cloudmem mcp [--http ADDR [--token-file FILE] [--tls-cert FILE --tls-key FILE]]\nRun 'cloudmem mcp --help' for more.\n"},
		{"beyond loopback without tokens", []string{"--store", dir, "mcp", "--http", "0.0.0.0:0"}, nil, exitFail,
			"cloudmem mcp: mcpserver: serving beyond loopback needs bearer tokens: 0.0.0.0:0 is not a loopback address; give tokens (a token file or the environment)\n"},
		{"a bad token file", []string{"--store", dir, "mcp", "--http", "127.0.0.1:0", "--token-file", badTokens}, nil, exitFail,
			"cloudmem mcp: mcpserver: bad tokens: tenant 1 (\"a\"): the token is shorter than 16 bytes\n"},
		{"a short token in the environment", []string{"--store", dir, "mcp", "--http", "127.0.0.1:0"}, map[string]string{mcpTokenEnv: "short"}, exitFail,
			"cloudmem mcp: $CLOUDMEM_MCP_TOKEN: mcpserver: bad tokens: the token of \"default\" is shorter than 16 bytes\n"},
		{"a certificate without its key", []string{"--store", dir, "mcp", "--http", "127.0.0.1:0", "--tls-cert", badTokens}, nil, exitUsage,
			"cloudmem mcp: --tls-cert and --tls-key go together\nUsage: cloudmem mcp [--http ADDR [--token-file FILE] [--tls-cert FILE --tls-key FILE]]\nRun 'cloudmem mcp --help' for more.\n"},
		{"an issuer without an audience", []string{"--store", dir, "mcp", "--http", "127.0.0.1:0", "--oauth-issuer", "https://idp.example.com"}, nil, exitUsage,
			"cloudmem mcp: --oauth-issuer and --oauth-audience go together\nUsage: cloudmem mcp [--http ADDR [--token-file FILE] [--tls-cert FILE --tls-key FILE]]\nRun 'cloudmem mcp --help' for more.\n"},
		{"OAuth and tokens", []string{"--store", dir, "mcp", "--http", "127.0.0.1:0", "--oauth-issuer", "https://idp.example.com", "--oauth-audience", "https://mem.example.com/mcp"},
			map[string]string{mcpTokenEnv: "0123456789abcdef0123"}, exitUsage,
			"cloudmem mcp: --oauth-issuer takes no bearer tokens (--token-file, $CLOUDMEM_MCP_TOKEN_FILE, $CLOUDMEM_MCP_TOKEN)\nUsage: cloudmem mcp [--http ADDR [--token-file FILE] [--tls-cert FILE --tls-key FILE]]\nRun 'cloudmem mcp --help' for more.\n"},
		{"a leeway that is not positive", []string{"--store", dir, "mcp", "--http", "127.0.0.1:0", "--oauth-issuer", "https://idp.example.com", "--oauth-audience", "https://mem.example.com/mcp", "--oauth-leeway", "0s"}, nil, exitUsage,
			"cloudmem mcp: --oauth-leeway must be positive\nUsage: cloudmem mcp [--http ADDR [--token-file FILE] [--tls-cert FILE --tls-key FILE]]\nRun 'cloudmem mcp --help' for more.\n"},
		{"an issuer that does not answer", []string{"--store", dir, "mcp", "--http", "127.0.0.1:0", "--oauth-issuer", "http://127.0.0.1:1", "--oauth-audience", "https://mem.example.com/mcp"}, nil, exitFail,
			"cloudmem mcp: mcpserver: the OAuth issuer does not answer: its metadata: GET http://127.0.0.1:1/.well-known/oauth-authorization-server: Get \"http://127.0.0.1:1/.well-known/oauth-authorization-server\": dial tcp 127.0.0.1:1: connect: connection refused; GET http://127.0.0.1:1/.well-known/openid-configuration: Get \"http://127.0.0.1:1/.well-known/openid-configuration\": dial tcp 127.0.0.1:1: connect: connection refused\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cloudmem(tc.args, "", tc.env)
			if code != tc.code || stderr != tc.stderr {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, stderr, tc.code, tc.stderr)
			}
		})
	}
}

// tokenClient sends token as its bearer token.
func tokenClient(token string) *http.Client {
	return &http.Client{Transport: bearerTransport(token)}
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}
