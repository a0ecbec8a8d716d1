// Command base is the baseline of size.sh: the memory tool over an
// in-memory store, with no search engine.
package main

import (
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
)

func main() {
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Create(context.Background(), "/memories/a.md", "deploy key\n").Text)
}
