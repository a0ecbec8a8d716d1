// Command sqlite is base with SQLite FTS5 through modernc.org/sqlite
// (size.sh).
package main

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
	_ "modernc.org/sqlite"
)

func main() {
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Create(context.Background(), "/memories/a.md", "deploy key\n").Text)
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		panic(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, body)`); err != nil {
		panic(err)
	}
	if _, err := db.Exec(`INSERT INTO notes VALUES ('a.md', 'deploy key')`); err != nil {
		panic(err)
	}
	var path string
	if err := db.QueryRow(`SELECT path FROM notes WHERE notes MATCH 'deploy' ORDER BY bm25(notes)`).Scan(&path); err != nil {
		panic(err)
	}
	fmt.Println(path)
}
