// Package searchengines compares the engines issue 30 names for package
// search, on the corpus of search's own benchmark (2,000 files of 10 KB,
// package internal/corpus): package search's in-memory index, SQLite FTS5
// through the pure-Go modernc.org/sqlite, and bleve. It is a module of its
// own so that the library's go.mod gains nothing it does not use.
//
//	cd bench/searchengines && go test -run '^$' -bench . -benchtime 1x
//	bash bench/searchengines/size.sh   # binary sizes and dependencies
//
// Each engine indexes the same texts, already in memory (what a build adds
// to reading the files, which is the same for all three): package search
// and SQLite in memory, bleve in its default format (scorch) in a
// temporary directory, as its in-memory index is far slower. Each answers
// the same queries (corpus.Queries) with the ten best files and a snippet
// of each, as the memory_search tool does.
package searchengines
