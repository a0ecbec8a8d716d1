package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// historyCommands are the commands BenchmarkHistoryOverhead measures, each
// after its untimed setup, if any. Apart from the records, insert's growing
// file and create's new files, each leaves the store as it found it, so
// that every iteration does the same work.
var historyCommands = []struct {
	name       string
	setup, run func(ctx context.Context, h *memory.Handler, i int) memory.Result
}{
	{"view", nil, func(ctx context.Context, h *memory.Handler, _ int) memory.Result {
		return h.View(ctx, "/memories/f.md", nil)
	}},
	{"str_replace", nil, func(ctx context.Context, h *memory.Handler, i int) memory.Result {
		old, new := "MARKER line", "MARKED line"
		if i%2 == 1 {
			old, new = new, old
		}
		return h.StrReplace(ctx, "/memories/f.md", old, new)
	}},
	{"insert", nil, func(ctx context.Context, h *memory.Handler, _ int) memory.Result {
		return h.Insert(ctx, "/memories/g.md", 0, "x\n")
	}},
	{"create", nil, func(ctx context.Context, h *memory.Handler, i int) memory.Result {
		return h.Create(ctx, fmt.Sprintf("/memories/new/%d.md", i), text2K)
	}},
	{"delete", func(ctx context.Context, h *memory.Handler, i int) memory.Result {
		return h.Create(ctx, fmt.Sprintf("/memories/old/%d.md", i), text2K)
	}, func(ctx context.Context, h *memory.Handler, i int) memory.Result {
		return h.Delete(ctx, fmt.Sprintf("/memories/old/%d.md", i))
	}},
	{"rename", nil, func(ctx context.Context, h *memory.Handler, i int) memory.Result {
		from, to := "/memories/f.md", "/memories/moved.md"
		if i%2 == 1 {
			from, to = to, from
		}
		return h.Rename(ctx, from, to)
	}},
}

// BenchmarkHistoryOverhead measures what history=on costs, per command and
// backend: each command runs on a store without history and on a second
// store of the same backend (another prefix, another directory) with
// history.New above it, alternately in one loop, so that both see the same
// load. It reports the median time of each (plain-us/op, history-us/op),
// their ratio (history/plain) and, on the servers, the requests each
// command sent (plain-req/op, history-req/op). With the emulators up, from
// bench/:
//
//	eval "$(bash ../integration/emulators.sh env)"
//	go test -run xxx -bench HistoryOverhead -benchtime 30x .
//
// A backend whose server is not configured is skipped, unless CI or
// CLOUDMEM_INTEGRATION is set: then it fails.
func BenchmarkHistoryOverhead(b *testing.B) {
	tmp := b.TempDir()
	runID := time.Now().UTC().Format("20060102T150405")
	plainEnv := &env{runID: runID + "-plain", tmp: tmp + "/plain"}
	histEnv := &env{runID: runID + "-history", tmp: tmp + "/history"}
	for _, name := range allTargets {
		b.Run(name, func(b *testing.B) {
			plain, plainH := openHistoryTarget(b, plainEnv, name, false)
			hist, histH := openHistoryTarget(b, histEnv, name, true)
			for _, c := range historyCommands {
				b.Run(c.name, func(b *testing.B) {
					var tPlain, tHist []time.Duration
					var reqPlain, reqHist int64
					i := 0
					for b.Loop() {
						d, n := timeCommand(b, plain, plainH, c.setup, c.run, i)
						tPlain, reqPlain = append(tPlain, d), reqPlain+n
						d, n = timeCommand(b, hist, histH, c.setup, c.run, i)
						tHist, reqHist = append(tHist, d), reqHist+n
						i++
					}
					mp, mh := median(tPlain), median(tHist)
					b.ReportMetric(float64(mp)/1e3, "plain-us/op")
					b.ReportMetric(float64(mh)/1e3, "history-us/op")
					b.ReportMetric(float64(mh)/float64(mp), "ratio")
					if plain.requests != nil {
						b.ReportMetric(float64(reqPlain)/float64(i), "plain-req/op")
						b.ReportMetric(float64(reqHist)/float64(i), "history-req/op")
					}
				})
			}
		})
	}
}

// openHistoryTarget opens the target called name in e, with history above
// its store when withHistory is set, and a handler over it holding the two
// files the commands work on. The target is closed (and wiped) when b ends.
func openHistoryTarget(b *testing.B, e *env, name string, withHistory bool) (*target, *memory.Handler) {
	b.Helper()
	ctx := context.WithoutCancel(b.Context())
	if err := os.MkdirAll(e.tmp, 0o700); err != nil {
		b.Fatal(err)
	}
	t, err := e.open(ctx, name)
	if err != nil {
		if os.Getenv("CI") == "" && os.Getenv("CLOUDMEM_INTEGRATION") == "" {
			b.Skipf("%s: %v", name, err)
		}
		b.Fatalf("%s: %v", name, err)
	}
	b.Cleanup(func() {
		if err := t.close(ctx); err != nil {
			b.Errorf("closing %s: %v", name, err)
		}
	})
	if t.sdk != nil { // unused here, but the close deletes its object
		if err := t.sdk.setup(ctx, []byte(text2K)); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
	}
	store := t.store
	if withHistory {
		hs, err := history.New(store, &history.Options{Actor: "bench", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		store = hs
	}
	h, err := memory.New(store, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []string{"/memories/f.md", "/memories/g.md"} {
		if r := h.Create(ctx, path, text2K); r.IsError {
			b.Fatalf("%s: %s", name, r.Text)
		}
	}
	return t, h
}

// timeCommand runs setup (if not nil), then the command run, and returns
// the command's time and the requests it sent (0 where the target counts
// none).
func timeCommand(b *testing.B, t *target, h *memory.Handler, setup, run func(context.Context, *memory.Handler, int) memory.Result, i int) (time.Duration, int64) {
	if setup != nil {
		if r := setup(b.Context(), h, i); r.IsError {
			b.Fatalf("%s: setup: %s", t.name, r.Text)
		}
	}
	var before int64
	if t.requests != nil {
		before = t.requests()
	}
	start := time.Now()
	r := run(b.Context(), h, i)
	d := time.Since(start)
	if r.IsError {
		b.Fatalf("%s: %s", t.name, r.Text)
	}
	if t.requests == nil {
		return d, 0
	}
	return d, t.requests() - before
}
