package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// sdkEncode is how the SDK's JSON-RPC layer encodes a result
// (encoding/json without HTML escaping at the top level).
func sdkEncode(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestTextResultWire checks that a textResult encodes to the SDK's bytes
// for the same CallToolResult, for texts that exercise every escape.
func TestTextResultWire(t *testing.T) {
	texts := []string{"", "plain", "Error: The path /memories/x does not exist.",
		"<a href=\"x\">&amp;</a>", "tab\there\nline\r\n", "\x00\x01\x1f\x7f", "\u2028\u2029",
		"é 漢字 😀", "bad \xff\xfe utf-8", `back\slash "quote"`}
	for _, text := range texts {
		for _, isError := range []bool{false, true} {
			sdk := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
			ours := fastResult(&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolName}}, sdk)
			if _, ok := ours.(*textResult); !ok {
				t.Fatalf("fastResult(%q) = %T, want *textResult", text, ours)
			}
			if got, want := sdkEncode(t, ours), sdkEncode(t, sdk); got != want {
				t.Errorf("text %q, isError %v:\n got %s\nwant %s", text, isError, got, want)
			}
		}
	}
}

// TestFastResultKeepsOthers checks that every result a textResult cannot
// write the same comes back unchanged.
func TestFastResultKeepsOthers(t *testing.T) {
	plain := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolName}}
	text := func() []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: "x"}} }
	cases := []struct {
		name string
		req  *mcp.CallToolRequest
		res  *mcp.CallToolResult
	}{
		{"request _meta", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: ToolName,
			Meta: mcp.Meta{"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}, &mcp.CallToolResult{Content: text()}},
		{"result _meta", plain, &mcp.CallToolResult{Meta: mcp.Meta{"k": "v"}, Content: text()}},
		{"image", plain, &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}}},
		{"two contents", plain, &mcp.CallToolResult{Content: append(text(), text()...)}},
		{"no content", plain, &mcp.CallToolResult{}},
		{"structured", plain, &mcp.CallToolResult{Content: text(), StructuredContent: map[string]any{"a": 1}}},
		{"annotated", plain, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1}}}}},
	}
	for _, c := range cases {
		if got := fastResult(c.req, c.res); got != mcp.Result(c.res) {
			t.Errorf("%s: fastResult = %T, want the SDK's result unchanged", c.name, got)
		}
	}
}

// testHandler is a handler over a mem store holding a few files whose
// texts need JSON escapes.
func testHandler(t *testing.T) *memory.Handler {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	store := mem.New(nil)
	files := map[string]string{
		"notes.md":    "<b>bold</b> & \"quoted\" \\ back\n\ttabbed\n\u2028 separator é 漢字 😀\n",
		"dir/a.md":    "a\n",
		"dir/b/c.txt": "c\n",
	}
	for k, v := range files {
		if _, err := store.Put(context.Background(), k, []byte(v), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := memory.New(store, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestResultMiddlewareWire runs the same tool calls through a Server and
// through the SDK's server with the same tool and no resultMiddleware, over
// the stdio framing, and checks that every answer line is byte-identical.
func TestResultMiddlewareWire(t *testing.T) {
	got := exchange(t, New(testHandler(t), &Options{Logger: slog.New(slog.DiscardHandler)}).MCP().Run, toolCalls(memoryCalls))
	want := exchange(t, referenceServer(testHandler(t)).Run, toolCalls(memoryCalls))
	compareLines(t, got[1:], want[1:]) // the servers' capabilities differ, so their answers to initialize do
}

// memoryCalls are memory commands whose answers need JSON escapes, and
// errors.
var memoryCalls = []string{
	`{"command":"view","path":"/memories/notes.md"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/missing.md"}`,
	`{"command":"str_replace","path":"/memories/notes.md","old_str":"<b>bold</b>","new_str":"<i>it</i>"}`,
	`{"command":"str_replace","path":"/memories/notes.md","old_str":"absent","new_str":"x"}`,
	`{"command":"create","path":"/memories/new.md","file_text":"x < y\n"}`,
	`{"command":"bogus"}`,
}

// TestStreamTransportWire runs sessions through Server.Run over an
// mcp.IOTransport (so through a StreamTransport) and through the SDK's
// server and connection, and checks that the answers are byte-identical:
// tool calls, string ids, errors, batches where the protocol has them, and
// the input that ends a session.
func TestStreamTransportWire(t *testing.T) {
	view := `"params":{"name":"memory","arguments":{"command":"view","path":"/memories/notes.md"}}`
	sessions := map[string][]string{
		"tool calls": toolCalls(memoryCalls),
		"other messages": {initializeLine("2025-06-18"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"s-<1>","method":"tools/call",` + view + `}`,
			`{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`,
			`{"jsonrpc":"2.0","id":8,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":10,"method":"resources/list"}`,
			`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"memory"}}`,
			`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"other","arguments":{}}}`,
			` {"jsonrpc":"2.0", "id":13, "method":"tools/call", ` + view + ` } `,
			`{"jsonrpc":"2.0","id":14,"Method":"ping","method":"tools/call",` + view + `}`,
			`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"_meta":{"progressToken":"p"},"name":"memory","arguments":{"command":"view","path":"/memories"}}}`,
		},
		"batch, 2025-03-26": {initializeLine("2025-03-26"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`[{"jsonrpc":"2.0","id":20,"method":"ping"},{"jsonrpc":"2.0","id":21,"method":"tools/call",` + view + `}]`,
			`{"jsonrpc":"2.0","id":22,"method":"ping"}`,
			`[]`},
		"batch, 2025-06-18": {initializeLine("2025-06-18"), `[{"jsonrpc":"2.0","id":20,"method":"ping"}]`},
		"trailing data":     {initializeLine("2025-06-18"), `{"jsonrpc":"2.0","id":2,"method":"ping"} {}`},
		"malformed JSON":    {initializeLine("2025-06-18"), `{"jsonrpc":"2.0","id":2,]`},
		"wrong version":     {initializeLine("2025-06-18"), `{"jsonrpc":"1.0","id":2,"method":"ping"}`},
		"bad id":            {initializeLine("2025-06-18"), `{"jsonrpc":"2.0","id":{},"method":"ping"}`},
		"response, no id":   {initializeLine("2025-06-18"), `{"jsonrpc":"2.0","result":{}}`},
		"deep":              {initializeLine("2025-06-18"), `{"jsonrpc":"2.0","id":2,"method":"ping","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`},
		"call before init":  {`{"jsonrpc":"2.0","id":2,"method":"tools/call",` + view + `}`},
		"batch before init": {`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`},
		"initialize in a batch": {"[" + initializeLine("2025-06-18") + "]", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`},
	}
	quiet := slog.New(slog.DiscardHandler)
	// The one difference: the SDK's connection waits for an answer to each
	// notification of a batch, so it never answers a batch that holds one;
	// a StreamTransport answers the batch's calls.
	got := exchange(t, New(testHandler(t), &Options{Logger: quiet}).Run, []string{initializeLine("2025-03-26"),
		`[{"jsonrpc":"2.0","id":20,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"ping"}]`})
	if want := `[{"jsonrpc":"2.0","id":20,"result":{}},{"jsonrpc":"2.0","id":"b","result":{}}]` + "\n"; len(got) != 2 || got[1] != want {
		t.Errorf("batch with a notification: got %q, want the answer to initialize, then %q", got, want)
	}
	for name, lines := range sessions {
		t.Run(name, func(t *testing.T) {
			got := exchange(t, New(testHandler(t), &Options{Logger: quiet}).Run, lines)
			want := exchange(t, func(ctx context.Context, tr mcp.Transport) error {
				ref := New(testHandler(t), &Options{Logger: quiet}) // the same server on the SDK's connection
				return ref.MCP().Run(ctx, tr)
			}, lines)
			compareLines(t, got, want)
		})
	}
}

// referenceServer is the SDK's server with the memory tool of a Server
// over h and nothing of this package's on the wire: no resultMiddleware,
// and its own stdio connection when run.
func referenceServer(h *memory.Handler) *mcp.Server {
	quiet := slog.New(slog.DiscardHandler)
	ref := mcp.NewServer(&mcp.Implementation{Name: "cloudmem", Title: "cloudmem memory", Version: "devel"}, &mcp.ServerOptions{Logger: quiet})
	ref.AddTool(tool(), New(h, &Options{Logger: quiet}).callTool)
	return ref
}

// toolCalls is a session that initializes and sends each input as a
// tools/call of the memory tool.
func toolCalls(inputs []string) []string {
	lines := []string{initializeLine("2025-06-18"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`}
	for i, input := range inputs {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory","arguments":%s}}`, 10+i, input))
	}
	return lines
}

func initializeLine(version string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
}

func compareLines(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d lines, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// exchange serves run over OS pipes and sends each line in turn; after
// each line that is not a notification it reads one answer line. It
// returns the answers; "EOF" ends them when the server closed the stream,
// "no answer: ..." when none came within 10 s.
func exchange(t *testing.T, run func(context.Context, mcp.Transport) error, lines []string) []string {
	t.Helper()
	toServer, fromClient, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	toClient, fromServer, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := toClient.SetReadDeadline(time.Now().Add(3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer}) }()
	defer func() {
		fromClient.Close()
		stop()
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			t.Error("the server did not stop")
		}
		toClient.Close()
	}()
	in := bufio.NewReader(toClient)
	var answers []string
	for _, line := range lines {
		if _, err := fromClient.WriteString(line + "\n"); err != nil {
			return append(answers, "EOF") // the server is gone
		}
		if strings.HasPrefix(line, `{"jsonrpc":"2.0","method":"notifications/`) {
			continue
		}
		answer, err := in.ReadString('\n')
		if errors.Is(err, io.EOF) {
			return append(answers, "EOF")
		}
		if err != nil {
			return append(answers, "no answer: "+err.Error())
		}
		answers = append(answers, answer)
	}
	return answers
}
