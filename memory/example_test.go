package memory_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
)

// A Handler over an in-memory store: the model creates a file, then views
// it. Execute takes the raw input object of a tool_use block and returns
// the text of the tool_result.
func Example() {
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, input := range []string{
		`{"command":"create","path":"/memories/notes.md","file_text":"Prefers tea.\nLives in Lyon."}`,
		`{"command":"view","path":"/memories/notes.md"}`,
		`{"command":"view","path":"/memories"}`,
		`{"command":"delete","path":"/memories"}`,
	} {
		r := h.Execute(ctx, []byte(input))
		fmt.Printf("is_error=%v\n%s\n\n", r.IsError, r.Text)
	}
	// Output:
	// is_error=false
	// File created successfully at: /memories/notes.md
	//
	// is_error=false
	// Here's the content of /memories/notes.md with line numbers:
	//      1	Prefers tea.
	//      2	Lives in Lyon.
	//
	// is_error=false
	// Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
	// 27B	/memories
	// 27B	/memories/notes.md
	//
	// is_error=true
	// Error: Cannot delete the /memories directory itself
}
