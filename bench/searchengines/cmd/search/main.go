// Command search is base with package search's index (size.sh).
package main

import (
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

func main() {
	ctx := context.Background()
	s := mem.New(nil)
	x := search.New(s, nil)
	h, err := memory.New(s, memory.Options{Observer: x.Observer(nil)})
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Create(ctx, "/memories/a.md", "deploy key\n").Text)
	res, err := x.Search(ctx, search.Request{Query: "deploy"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
}
