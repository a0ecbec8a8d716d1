package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// A Server over an in-memory store, and a client that calls its memory
// tool and lists its resources. A real server runs
// srv.Run(ctx, &mcp.StdioTransport{}) instead, as "cloudmem mcp" does.
func Example() {
	ctx := context.Background()
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpserver.New(h, &mcpserver.Options{Actor: "example@host"})

	serverEnd, clientEnd := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, serverEnd, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	for _, input := range []string{
		`{"command": "create", "path": "/memories/user.md", "file_text": "Prefers short answers.\n"}`,
		`{"command": "view", "path": "/memories"}`,
		`{"command": "delete", "path": "/memories/nothing.md"}`,
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolName, Arguments: json.RawMessage(input)})
		if err != nil {
			log.Fatal(err)
		}
		r, err := mcpserver.ResultOf(res)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("isError=%v\n%s\n", r.IsError, r.Text)
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range list.Resources {
		fmt.Println(r.URI, r.MIMEType, r.Size)
	}
	// Output:
	// isError=false
	// File created successfully at: /memories/user.md
	// isError=false
	// Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
	// 23B	/memories
	// 23B	/memories/user.md
	// isError=true
	// Error: The path /memories/nothing.md does not exist
	// memory:///memories/user.md text/markdown 23
}

// A Server on the SDK's stream transport over a pair of pipes, spoken to
// with the newline-delimited JSON-RPC a client writes on the server's
// stdin (mcp.StdioTransport is the same over os.Stdin and os.Stdout).
func ExampleServer_Run() {
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv := mcpserver.New(h, nil)
	toServer, clientOut := io.Pipe()
	clientIn, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.Run(context.Background(), &mcp.IOTransport{Reader: toServer, Writer: fromServer})
	}()

	answers := bufio.NewReader(clientIn)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory","arguments":{"command":"create","path":"/memories/a.md","file_text":"x < y\n"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"memory","arguments":{"command":"view","path":"/memories/a.md"}}}`,
	} {
		if _, err := io.WriteString(clientOut, line+"\n"); err != nil {
			log.Fatal(err)
		}
		if strings.Contains(line, `"method":"notifications/`) {
			continue // no answer
		}
		answer, err := answers.ReadString('\n')
		if err != nil {
			log.Fatal(err)
		}
		if strings.Contains(line, `"method":"tools/call"`) {
			fmt.Print(answer)
		}
	}
	clientOut.Close() // the client goes: the session ends
	if err := <-done; err != nil && !errors.Is(err, io.EOF) {
		log.Fatal(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"File created successfully at: /memories/a.md"}]}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Here's the content of /memories/a.md with line numbers:\n     1\tx \u003c y\n     2\t"}]}}
}
