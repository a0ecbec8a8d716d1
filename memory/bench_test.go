package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Benchmarks of each command over the in-memory store (which measures the
// handler itself) and the local-directory store (the embedded default, with
// its fsyncs): a 2 KB file, and a directory of 200 files. Each benchmark has
// a mem and a file sub-benchmark. Run: go test -run xxx -bench . -benchmem ./memory/

// benchStores are the stores every benchmark runs over, each new and empty.
var benchStores = []struct {
	name string
	open func(b *testing.B) blob.Store
}{
	{"mem", func(*testing.B) blob.Store { return mem.New(nil) }},
	{"file", func(b *testing.B) blob.Store {
		s, err := file.Open(context.Background(), b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
}

// eachStore runs bench as one sub-benchmark per store in benchStores.
func eachStore(b *testing.B, bench func(b *testing.B, s blob.Store)) {
	for _, bs := range benchStores {
		b.Run(bs.name, func(b *testing.B) { bench(b, bs.open(b)) })
	}
}

// text2K is a 2 KB memory file of 40 lines, with one unique marker line.
var text2K = func() string {
	var b strings.Builder
	for i := range 40 {
		if i == 20 {
			b.WriteString("MARKER line, unique in the file, forty-seven bytes\n")
			continue
		}
		fmt.Fprintf(&b, "line %02d: the user prefers concise answers...\n", i)
	}
	return b.String()
}()

// benchHandler returns a handler over s after seeding it with notes/a.md
// (text2K) and dir/ with 200 files.
func benchHandler(b *testing.B, s blob.Store) *memory.Handler {
	b.Helper()
	files := manyFiles("dir", 200)
	files["notes/a.md"] = text2K
	seed(b, s, files)
	h, err := memory.New(s, memory.Options{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// run executes input b.N times, failing on any error result.
func run(b *testing.B, h *memory.Handler, input string) {
	b.Helper()
	in := []byte(input)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if r := h.Execute(ctx, in); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

func BenchmarkViewFile(b *testing.B) {
	eachStore(b, func(b *testing.B, s blob.Store) {
		run(b, benchHandler(b, s), `{"command":"view","path":"/memories/notes/a.md"}`)
	})
}

func BenchmarkViewDir(b *testing.B) {
	eachStore(b, func(b *testing.B, s blob.Store) {
		run(b, benchHandler(b, s), `{"command":"view","path":"/memories/dir"}`)
	})
}

func BenchmarkStrReplace(b *testing.B) {
	// Replacing the marker with itself keeps the file the same size.
	eachStore(b, func(b *testing.B, s blob.Store) {
		run(b, benchHandler(b, s), `{"command":"str_replace","path":"/memories/notes/a.md","old_str":"MARKER line","new_str":"MARKER line"}`)
	})
}

func BenchmarkInsert(b *testing.B) {
	eachStore(b, func(b *testing.B, s blob.Store) {
		h := benchHandler(b, s)
		in := []byte(`{"command":"insert","path":"/memories/notes/a.md","insert_line":20,"insert_text":"an inserted line"}`)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			seed(b, s, map[string]string{"notes/a.md": text2K}) // keep it 2 KB
			b.StartTimer()
			if r := h.Execute(ctx, in); r.IsError {
				b.Fatal(r.Text)
			}
		}
	})
}

func BenchmarkCreate(b *testing.B) {
	eachStore(b, func(b *testing.B, s blob.Store) {
		h := benchHandler(b, s)
		in := []byte(`{"command":"create","path":"/memories/notes/new.md","file_text":` + fmt.Sprintf("%q", text2K) + `}`)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if r := h.Execute(ctx, in); r.IsError {
				b.Fatal(r.Text)
			}
			b.StopTimer()
			if err := s.Delete(ctx, "notes/new.md", blob.Cond{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

func BenchmarkDelete(b *testing.B) {
	eachStore(b, func(b *testing.B, s blob.Store) {
		h := benchHandler(b, s)
		in := []byte(`{"command":"delete","path":"/memories/notes/a.md"}`)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			seed(b, s, map[string]string{"notes/a.md": text2K})
			b.StartTimer()
			if r := h.Execute(ctx, in); r.IsError {
				b.Fatal(r.Text)
			}
		}
	})
}

// benchRename renames back and forth between two paths.
func benchRename(b *testing.B, h *memory.Handler, from, to string) {
	b.Helper()
	there := []byte(fmt.Sprintf(`{"command":"rename","old_path":%q,"new_path":%q}`, from, to))
	back := []byte(fmt.Sprintf(`{"command":"rename","old_path":%q,"new_path":%q}`, to, from))
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in := there
		if i%2 == 1 {
			in = back
		}
		if r := h.Execute(ctx, in); r.IsError {
			b.Fatal(r.Text)
		}
	}
}

func BenchmarkRenameFile(b *testing.B) {
	eachStore(b, func(b *testing.B, s blob.Store) {
		benchRename(b, benchHandler(b, s), "/memories/notes/a.md", "/memories/notes/b.md")
	})
}

func BenchmarkRenameDir50(b *testing.B) {
	eachStore(b, func(b *testing.B, s blob.Store) {
		seed(b, s, manyFiles("proj", 50))
		h, err := memory.New(s, memory.Options{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		benchRename(b, h, "/memories/proj", "/memories/project")
	})
}
