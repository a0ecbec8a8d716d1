package searchengines

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/corpus"
	"github.com/cloudmem/cloudmem/search"
	_ "modernc.org/sqlite"
)

// engine is one candidate: prepare does what is not timed (package search
// reads a store: the files are put in an in-memory one), build indexes the
// files, query answers one query with the ten best files (and a snippet of
// each), and close frees the index.
type engine interface {
	prepare(files []corpus.File) error
	build(files []corpus.File) error
	query(q string) (int, error)
	close() error
}

// BenchmarkEngines reports, for each engine: build-ms and build-cpu-ms
// (indexing the 2,000 texts, by the wall clock and in CPU time), p50-ms and p99-ms (corpus.Queries, 20 rounds), heap-mb
// (the Go heap the index holds, after a GC) and rss-mb (the process's
// resident memory grown by the build: SQLite's pages are outside the Go
// heap).
func BenchmarkEngines(b *testing.B) {
	files := corpus.Files(2000, 10_000)
	for _, name := range []string{"search", "sqlite-fts5", "bleve"} {
		b.Run(name, func(b *testing.B) {
			e := newEngine(b, name)
			if err := e.prepare(files); err != nil {
				b.Fatal(err)
			}
			heap0, rss0 := memory(b)
			c0, t0 := cpuTime(b), time.Now()
			if err := e.build(files); err != nil {
				b.Fatal(err)
			}
			build, buildCPU := time.Since(t0), cpuTime(b)-c0
			heap1, rss1 := memory(b)
			var ds []time.Duration
			for range 20 {
				for _, q := range corpus.Queries() {
					t0 := time.Now()
					n, err := e.query(q)
					if err != nil {
						b.Fatalf("%q: %v", q, err)
					}
					if n == 0 && !strings.HasSuffix(q, "*") {
						b.Fatalf("%q found nothing", q)
					}
					ds = append(ds, time.Since(t0))
				}
			}
			slices.Sort(ds)
			at := func(p float64) float64 { return ms(ds[int(p*float64(len(ds)-1))]) }
			b.ReportMetric(ms(build), "build-ms")
			b.ReportMetric(ms(buildCPU), "build-cpu-ms")
			b.ReportMetric(at(0.5), "p50-ms")
			b.ReportMetric(at(0.99), "p99-ms")
			b.ReportMetric(float64(heap1-heap0)/1e6, "heap-mb")
			b.ReportMetric(float64(rss1-rss0)/1e6, "rss-mb")
			if err := e.close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cpuTime is the CPU time the process has used (user and system): on a
// shared machine the wall clock also counts the time other programs held
// the cores.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// memory returns the Go heap in use after a GC and the resident set size.
func memory(b *testing.B) (heap, rss int64) {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	statm, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Fatal(err)
	}
	fields := strings.Fields(string(statm))
	pages, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return int64(m.HeapAlloc), pages * int64(os.Getpagesize())
}

func newEngine(b *testing.B, name string) engine {
	switch name {
	case "search":
		return &ours{}
	case "sqlite-fts5":
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1) // one connection: one in-memory database
		return &fts5{db: db}
	default:
		return &bleveEngine{dir: b.TempDir()}
	}
}

// ours is package search over an in-memory store holding the files.
type ours struct {
	s blob.Store
	x *search.Index
}

func (o *ours) prepare(files []corpus.File) error {
	o.s = mem.New(nil)
	for _, f := range files {
		if _, err := o.s.Put(context.Background(), f.Key, []byte(f.Text), blob.Cond{}); err != nil {
			return err
		}
	}
	return nil
}

func (o *ours) build([]corpus.File) error {
	o.x = search.New(o.s, &search.Options{MaxAge: time.Hour})
	return o.x.Refresh(context.Background())
}

func (o *ours) query(q string) (int, error) {
	res, err := o.x.Search(context.Background(), search.Request{Query: q})
	return len(res.Hits), err
}

func (o *ours) close() error { return nil }

// fts5 is SQLite's full-text index: the unicode61 tokenizer without
// diacritics (as search folds accents), ranked by bm25, with snippet.
type fts5 struct{ db *sql.DB }

func (f *fts5) prepare([]corpus.File) error { return nil }

func (f *fts5) build(files []corpus.File) error {
	if _, err := f.db.Exec(`CREATE VIRTUAL TABLE notes USING fts5(path UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 2')`); err != nil {
		return err
	}
	tx, err := f.db.Begin()
	if err != nil {
		return err
	}
	st, err := tx.Prepare(`INSERT INTO notes(path, body) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	for _, file := range files {
		if _, err := st.Exec(file.Key, file.Text); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// ftsQuery writes a query of search's syntax in FTS5's: each word or
// phrase quoted, a prefix as "word" *, any of them (OR).
func ftsQuery(q string) string {
	var parts []string
	for _, p := range split(q) {
		switch {
		case strings.HasPrefix(p, `"`):
			parts = append(parts, p)
		case strings.HasSuffix(p, "*"):
			parts = append(parts, `"`+strings.TrimSuffix(p, "*")+`" *`)
		default:
			parts = append(parts, `"`+p+`"`)
		}
	}
	return strings.Join(parts, " OR ")
}

// split cuts a benchmark query into its words and "phrases".
func split(q string) []string {
	var out []string
	for q = strings.TrimSpace(q); q != ""; q = strings.TrimSpace(q) {
		if q[0] == '"' {
			end := strings.IndexByte(q[1:], '"') + 2
			out, q = append(out, q[:end]), q[end:]
			continue
		}
		end := strings.IndexByte(q, ' ')
		if end < 0 {
			end = len(q)
		}
		out, q = append(out, q[:end]), q[end:]
	}
	return out
}

func (f *fts5) query(q string) (int, error) {
	rows, err := f.db.Query(`SELECT path, snippet(notes, 1, '«', '»', '…', 24) FROM notes WHERE notes MATCH ? ORDER BY bm25(notes) LIMIT 10`, ftsQuery(q))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var path, snip string
		if err := rows.Scan(&path, &snip); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

func (f *fts5) close() error { return f.db.Close() }

// bleveEngine is bleve's default index (scorch) in a temporary directory,
// with its standard analyser, scored by BM25, with highlighted fragments.
// Its in-memory index (NewMemOnly, the older upsidedown format) is not
// measured: it took over ten minutes to answer the queries on this corpus.
type bleveEngine struct {
	dir string
	idx bleve.Index
}

func (e *bleveEngine) prepare([]corpus.File) error { return nil }

func (e *bleveEngine) build(files []corpus.File) error {
	m := mapping.NewIndexMapping()
	m.ScoringModel = "bm25"
	idx, err := bleve.New(filepath.Join(e.dir, "bleve"), m)
	if err != nil {
		return err
	}
	e.idx = idx
	batch := idx.NewBatch()
	for i, f := range files {
		if err := batch.Index(f.Key, map[string]string{"body": f.Text}); err != nil {
			return err
		}
		if i%200 == 199 {
			if err := idx.Batch(batch); err != nil {
				return err
			}
			batch = idx.NewBatch()
		}
	}
	return idx.Batch(batch)
}

func (e *bleveEngine) query(q string) (int, error) {
	req := bleve.NewSearchRequestOptions(bleve.NewQueryStringQuery(q), 10, 0, false)
	req.Highlight = bleve.NewHighlight()
	res, err := e.idx.Search(req)
	if err != nil {
		return 0, fmt.Errorf("bleve: %w", err)
	}
	return len(res.Hits), nil
}

func (e *bleveEngine) close() error { return e.idx.Close() }
