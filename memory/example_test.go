package memory_test

import (
	"context"
	"errors"
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

// The typed API, for programs rather than the model: the same commands with
// Go arguments and Results, errors a program can branch on, the exact bytes
// of a file, and every file under a directory.
func ExampleHandler_Create() {
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := memory.WithActor(context.Background(), "docs-example")
	fmt.Println(h.Create(ctx, "/memories/notes/tea.md", "Prefers green tea.").Text)
	fmt.Println(h.StrReplace(ctx, "/memories/notes/tea.md", "green", "jasmine").Text)

	r := h.Create(ctx, "/memories/notes/tea.md", "again")
	fmt.Println(r.IsError, errors.Is(r.Err, memory.ErrExists))
	fmt.Println(r.Err)

	data, err := h.ReadFile(ctx, "/memories/notes/tea.md")
	fmt.Printf("%q %v\n", data, err)
	_, err = h.ReadFile(ctx, "/memories/notes")
	fmt.Println(errors.Is(err, memory.ErrNotFile), err)
	// Output:
	// File created successfully at: /memories/notes/tea.md
	// The memory file has been edited. Here is the snippet showing the change (with line numbers):
	//      1	Prefers jasmine tea.
	// true true
	// File /memories/notes/tea.md already exists
	// "Prefers jasmine tea." <nil>
	// true The path /memories/notes is not a file.
}

// Files lists every memory file under a directory, recursively; Resolve and
// PathOf map between paths and store keys.
func ExampleHandler_Files() {
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range []string{"/memories/b.md", "/memories/a/x.md", "/memories/a/.hidden"} {
		if r := h.Create(ctx, p, "text"); r.Err != nil {
			log.Fatal(r.Err)
		}
	}
	files, err := h.Files(ctx, "/memories")
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		fmt.Println(f.Path, f.Key, f.Size)
	}

	key, err := memory.Resolve("/memories//a/./x.md")
	fmt.Printf("%q %v %s\n", key, err, memory.PathOf(key))
	_, err = memory.Resolve("/memories/../etc/passwd")
	fmt.Println(errors.Is(err, memory.ErrInvalidPath), err)
	// Output:
	// /memories/a/.hidden a/.hidden 4
	// /memories/a/x.md a/x.md 4
	// /memories/b.md b.md 4
	// "a/x.md" <nil> /memories/a/x.md
	// true Path /memories/../etc/passwd would escape /memories directory
}
