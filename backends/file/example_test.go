//go:build unix

package file_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "memories")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := file.Open(ctx, dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	info, err := s.Put(ctx, "notes/todo.md", []byte("- water the plants\n"), blob.Cond{IfAbsent: true})
	if err != nil {
		log.Fatal(err)
	}
	// The object is an ordinary file under the directory.
	data, err := os.ReadFile(dir + "/notes/todo.md")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d bytes: %q\n", info.Key, info.Size, data)

	// A second create of the same key loses.
	_, err = s.Put(ctx, "notes/todo.md", []byte("other"), blob.Cond{IfAbsent: true})
	fmt.Println(errors.Is(err, blob.ErrPrecondition))
	// Output:
	// notes/todo.md: 19 bytes: "- water the plants\n"
	// true
}
