// Command bleve is base with bleve's in-memory index (size.sh).
package main

import (
	"context"
	"fmt"

	"github.com/blevesearch/bleve/v2"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
)

func main() {
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Create(context.Background(), "/memories/a.md", "deploy key\n").Text)
	idx, err := bleve.NewMemOnly(bleve.NewIndexMapping())
	if err != nil {
		panic(err)
	}
	defer idx.Close()
	if err := idx.Index("a.md", map[string]string{"body": "deploy key"}); err != nil {
		panic(err)
	}
	res, err := idx.Search(bleve.NewSearchRequest(bleve.NewQueryStringQuery("deploy")))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Total)
}
