package history_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// BenchmarkOverhead runs each command over a store without history and
// the same store with it, alternately in one loop, and reports both times
// and their ratio (history/plain): go test -run xxx -bench Overhead
// -benchtime 200x ./history/
func BenchmarkOverhead(b *testing.B) {
	backends := []struct {
		name string
		open func(b *testing.B) blob.Store
	}{
		{"mem", func(*testing.B) blob.Store { return mem.New(nil) }},
		{"file", func(b *testing.B) blob.Store { return newFile(b) }},
	}
	text := "# notes, first draft\n" + strings.Repeat("a line of a memory file, about forty bytes\n", 48) // 2 KB
	commands := []struct {
		name string
		run  func(h *memory.Handler, i int) memory.Result
	}{
		{"view", func(h *memory.Handler, _ int) memory.Result {
			return h.View(b.Context(), "/memories/f.md", nil)
		}},
		{"str_replace", func(h *memory.Handler, i int) memory.Result {
			old, new := "first draft", "second draft"
			if i%2 == 1 {
				old, new = new, old
			}
			return h.StrReplace(b.Context(), "/memories/f.md", old, new)
		}},
		{"insert", func(h *memory.Handler, i int) memory.Result {
			return h.Insert(b.Context(), "/memories/g.md", 0, "x\n")
		}},
		{"create+delete", func(h *memory.Handler, i int) memory.Result {
			path := fmt.Sprintf("/memories/new/%d.md", i)
			if r := h.Create(b.Context(), path, text); r.IsError {
				return r
			}
			return h.Delete(b.Context(), path)
		}},
		{"rename", func(h *memory.Handler, i int) memory.Result {
			from, to := "/memories/f.md", "/memories/moved.md"
			if i%2 == 1 {
				from, to = to, from
			}
			return h.Rename(b.Context(), from, to)
		}},
	}
	for _, be := range backends {
		for _, c := range commands {
			b.Run(be.name+"/"+c.name, func(b *testing.B) {
				plain := newHandler(b, be.open(b))
				hist := newHandler(b, wrap(b, be.open(b), nil))
				for _, h := range []*memory.Handler{plain, hist} {
					must(b, h.Create(b.Context(), "/memories/f.md", text))
					must(b, h.Create(b.Context(), "/memories/g.md", ""))
				}
				var tPlain, tHist time.Duration
				i := 0
				for b.Loop() {
					start := time.Now()
					must(b, c.run(plain, i))
					mid := time.Now()
					must(b, c.run(hist, i))
					tHist += time.Since(mid)
					tPlain += mid.Sub(start)
					i++
				}
				b.ReportMetric(float64(tPlain.Nanoseconds())/float64(i), "plain-ns/op")
				b.ReportMetric(float64(tHist.Nanoseconds())/float64(i), "history-ns/op")
				b.ReportMetric(float64(tHist)/float64(tPlain), "ratio")
			})
		}
	}
}
