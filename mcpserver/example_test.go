package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

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
