package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	_ "github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	_ "github.com/cloudmem/cloudmem/backends/s3"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// BenchmarkMCP measures one view and one str_replace of a 40-line file on
// the mem store: through the library (Handler.Execute), and through MCP over
// stdio's framing (newline-delimited JSON-RPC over OS pipes, which is what
// mcp.StdioTransport speaks on os.Stdin and os.Stdout) and over streamable
// HTTP on loopback. The stdio and http runs use the SDK's client, so they
// count its work too; the -raw runs send prepared request bytes and read the
// answer's bytes, so they count the server's work and the transport only;
// the sdk-floor runs do the same against the SDK's own server with a bare
// tool over the handler (so the difference is what this package's Server
// adds: its middleware, the actor, resource notifications); the pipe-floor and
// nethttp-floor runs answer every request with prepared bytes, the cost of
// the transport alone. Each run reports the CPU time, goroutines started and
// garbage collections per call beside the wall time. The difference per
// call is the overhead of MCP (docs/benchmarks-by-hand.md, "MCP overhead"):
//
//	go test ./mcpserver -run '^$' -bench MCP -benchtime 2000x
//
// With CLOUDMEM_BENCH_STORE set to a store URL (file:///tmp/x, or
// s3://BUCKET/PREFIX?endpoint=...; this test binary links the file and S3
// backends), the handler's store is that store instead of the mem store
// (docs/benchmarks-by-hand.md, "MCP overhead": the transport on real
// stores).
func BenchmarkMCP(b *testing.B) {
	var file strings.Builder
	for i := range 40 {
		fmt.Fprintf(&file, "line %d of the notes, with some text to read\n", i)
	}
	file.WriteString("state: even\n")
	view := []byte(`{"command":"view","path":"/memories/notes.md"}`)
	// Each str_replace flips the state, so that every call succeeds.
	flips := [2][]byte{
		[]byte(`{"command":"str_replace","path":"/memories/notes.md","old_str":"state: even","new_str":"state: odd"}`),
		[]byte(`{"command":"str_replace","path":"/memories/notes.md","old_str":"state: odd","new_str":"state: even"}`),
	}
	setup := func(b *testing.B) *memory.Handler {
		var store blob.Store = mem.New(nil)
		if raw := os.Getenv("CLOUDMEM_BENCH_STORE"); raw != "" {
			s, err := storeurl.Open(context.Background(), raw)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { blob.Close(s) })
			store = s
		}
		put(&testing.T{}, store, map[string]string{"notes.md": file.String()})
		h, err := memory.New(store, memory.Options{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	transports := []struct {
		name string
		exec func(b *testing.B, h *memory.Handler) func(input []byte) memory.Result
	}{
		{"library", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			return func(in []byte) memory.Result { return h.Execute(context.Background(), in) }
		}},
		{"stdio", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			cs := connectPipes(b, mcpserver.New(h, &mcpserver.Options{Logger: quiet}))
			return func(in []byte) memory.Result { return call(context.Background(), cs, in) }
		}},
		{"http", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Logger: quiet,
				Open: func(context.Context, *mcpserver.Tenant) (*memory.Handler, error) { return h, nil }})
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			b.Cleanup(ts.Close)
			cs := connectHTTP(b, ts.URL, "")
			return func(in []byte) memory.Result { return call(context.Background(), cs, in) }
		}},
		{"stdio-raw", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			return rawStdio(b, mcpserver.New(h, &mcpserver.Options{Logger: quiet}).Run)
		}},
		// The floors: the SDK's own server with a bare tool that hands the
		// arguments to the handler, and nothing else.
		{"stdio-raw-sdk-floor", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			return rawStdio(b, floorServer(h).Run)
		}},
		// The transport's floor: the same pipes and reads, and a goroutine
		// that answers every request line with a prepared answer of the
		// view's size, without MCP.
		{"stdio-raw-pipe-floor", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			return rawStdio(b, echoLines(preparedAnswer(b, h, view)))
		}},
		{"http-raw", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Logger: quiet,
				Open: func(context.Context, *mcpserver.Tenant) (*memory.Handler, error) { return h, nil }})
			if err != nil {
				b.Fatal(err)
			}
			ts := httptest.NewServer(srv)
			b.Cleanup(ts.Close)
			return rawHTTP(b, ts.URL)
		}},
		{"http-raw-sdk-floor", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			srv := floorServer(h)
			mux := http.NewServeMux()
			mux.Handle(mcpserver.MCPPath, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{JSONResponse: true, Logger: quiet}))
			ts := httptest.NewServer(mux)
			b.Cleanup(ts.Close)
			return rawHTTP(b, ts.URL)
		}},
		// net/http's floor: a handler that reads the request and writes a
		// prepared answer of the view's size.
		{"http-raw-nethttp-floor", func(b *testing.B, h *memory.Handler) func([]byte) memory.Result {
			answer := preparedAnswer(b, h, view)
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.Copy(io.Discard, r.Body); err != nil {
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Mcp-Session-Id", "floor")
				w.Write(answer)
			}))
			b.Cleanup(ts.Close)
			return rawHTTP(b, ts.URL)
		}},
	}
	for _, tr := range transports {
		b.Run("view/"+tr.name, func(b *testing.B) {
			exec := tr.exec(b, setup(b))
			defer reportCPU(b)()
			for b.Loop() {
				if r := exec(view); r.IsError || !strings.HasPrefix(r.Text, "Here's the content") {
					b.Fatalf("view: %+v", r)
				}
			}
		})
		b.Run("str_replace/"+tr.name, func(b *testing.B) {
			exec := tr.exec(b, setup(b))
			defer reportCPU(b)()
			i := 0
			for b.Loop() {
				if r := exec(flips[i%2]); r.IsError {
					b.Fatalf("str_replace: %+v", r)
				}
				i++
			}
		})
	}
}

// reportCPU starts counting the process's CPU time, the goroutines it
// starts and its garbage collections; the function it returns reports them
// per call as cpu-µs/op (client, server and garbage collector together),
// goroutines/op and gc/op.
func reportCPU(b *testing.B) func() {
	samples := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}, {Name: "/gc/cycles/total:gc-cycles"}}
	read := func() [2]uint64 {
		metrics.Read(samples)
		var v [2]uint64
		for i, s := range samples {
			if s.Value.Kind() == metrics.KindUint64 {
				v[i] = s.Value.Uint64()
			}
		}
		return v
	}
	start, ok := cpuTime()
	before := read()
	return func() {
		end, _ := cpuTime()
		after := read()
		if b.N == 0 {
			return
		}
		if ok {
			b.ReportMetric(float64(end-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		}
		b.ReportMetric(float64(after[0]-before[0])/float64(b.N), "goroutines/op")
		b.ReportMetric(float64(after[1]-before[1])/float64(b.N), "gc/op")
	}
}

// connectPipes serves srv over two OS pipes with the stdio framing, as a
// process serving on its stdin and stdout does, and returns a client
// session to it.
func connectPipes(tb testing.TB, srv *mcpserver.Server) *mcp.ClientSession {
	tb.Helper()
	toServer, fromClient, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	toClient, fromServer, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		cs.Close()
		stop()
		<-done
	})
	return cs
}

// floorServer is the SDK's server with one bare tool over h.
func floorServer(h *memory.Handler) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor"}, &mcp.ServerOptions{Logger: quiet})
	srv.AddTool(&mcp.Tool{Name: "memory", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := h.Execute(ctx, req.Params.Arguments)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}, nil
		})
	return srv
}

// preparedAnswer is the JSON-RPC answer line to a tools/call of input,
// as the memory server writes it.
func preparedAnswer(b *testing.B, h *memory.Handler, input []byte) []byte {
	text, err := json.Marshal(h.Execute(context.Background(), input).Text)
	if err != nil {
		b.Fatal(err)
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":%s}]}}`+"\n", text)
}

// echoLines is a stand-in for a server on a stdio transport: it answers
// every line that is not a notification with answer.
func echoLines(answer []byte) func(context.Context, mcp.Transport) error {
	return func(ctx context.Context, t mcp.Transport) error {
		pipes := t.(*mcp.IOTransport)
		in := bufio.NewReader(pipes.Reader)
		for {
			line, err := in.ReadSlice('\n')
			if err != nil {
				return err
			}
			if bytes.Contains(line, []byte(`"method":"notifications/`)) {
				continue
			}
			if _, err := pipes.Writer.Write(answer); err != nil {
				return err
			}
		}
	}
}

// jsonRPCCall is the tools/call request of a memory command input.
func jsonRPCCall(id int, input []byte) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory","arguments":%s}}`, id, input)
}

// checkRaw fails unless answer is a success result of a tool call.
func checkRaw(b *testing.B, answer []byte) memory.Result {
	if !bytes.HasPrefix(answer, []byte(`{"jsonrpc":"2.0","id":`)) || !bytes.Contains(answer, []byte(`"content":[{"type":"text"`)) ||
		bytes.Contains(answer, []byte(`"isError":true`)) {
		b.Fatalf("answer: %s", answer)
	}
	return memory.Result{Text: "Here's the content"}
}

// rawStdio serves run over OS pipes and talks to it with prepared lines.
func rawStdio(b *testing.B, run func(context.Context, mcp.Transport) error) func([]byte) memory.Result {
	toServer, fromClient, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	toClient, fromServer, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, &mcp.IOTransport{Reader: toServer, Writer: fromServer}) }()
	b.Cleanup(func() {
		fromClient.Close()
		stop()
		<-done
	})
	in := bufio.NewReader(toClient)
	send := func(line []byte) {
		if _, err := fromClient.Write(append(line, '\n')); err != nil {
			b.Fatal(err)
		}
	}
	send([]byte(initialize))
	if _, err := in.ReadBytes('\n'); err != nil {
		b.Fatal(err)
	}
	send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	id := 100
	return func(input []byte) memory.Result {
		id++
		send(jsonRPCCall(id, input))
		answer, err := in.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		return checkRaw(b, answer)
	}
}

// rawHTTP opens a session at url with prepared requests and returns a
// function that posts one tool call in it.
func rawHTTP(b *testing.B, url string) func([]byte) memory.Result {
	client := &http.Client{}
	post := func(session string, body []byte) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodPost, url+mcpserver.MCPPath, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		answer, err := io.ReadAll(resp.Body)
		if err != nil {
			b.Fatal(err)
		}
		return resp, answer
	}
	resp, _ := post("", []byte(initialize))
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		b.Fatal("no session")
	}
	post(session, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	id := 100
	return func(input []byte) memory.Result {
		id++
		_, answer := post(session, jsonRPCCall(id, input))
		return checkRaw(b, answer)
	}
}
