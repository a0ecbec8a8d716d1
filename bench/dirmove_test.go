package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// The directory rename and delete measurement of issue 14.3, against the
// running emulators. It is a measurement, not a timed test: it runs only
// when CLOUDMEM_BENCH_DIRMOVE is set (to "1"), and then fails loudly when a
// server is missing. Run it with
//
//	eval "$(bash integration/emulators.sh env)"
//	cd bench && CLOUDMEM_BENCH_DIRMOVE=1 go test -run 'TestDirMove' -v .
//
// and copy the logged rows into docs/dirmove.md.

// dirMoveFiles is the size of the directory renamed and deleted on MinIO;
// redisRenameFiles that of the Redis rename, the default file limit.
const (
	dirMoveFiles     = 500
	redisRenameFiles = 2000
)

func dirMoveEnabled(t *testing.T) {
	t.Helper()
	if os.Getenv("CLOUDMEM_BENCH_DIRMOVE") == "" {
		t.Skip("a measurement: set CLOUDMEM_BENCH_DIRMOVE=1 to run it against the emulators")
	}
}

// openMeasured opens the bench target name for a hand-run measurement,
// under a run prefix of its own (what, then the time), and removes what the
// test wrote when it ends. Only that is removed: the target's SDK floor
// object was never made, so tg.close would fail on it. The client is left
// to the end of the test process.
func openMeasured(t *testing.T, what, name string) *target {
	t.Helper()
	ctx := t.Context()
	e := &env{runID: what + "-" + time.Now().UTC().Format("20060102T150405")}
	tg, err := e.open(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := wipe(context.WithoutCancel(ctx), tg.store); err != nil {
			t.Error(err)
		}
	})
	return tg
}

// seedDir writes n small files under dir, 16 at a time.
func seedDir(ctx context.Context, s blob.Store, dir string, n int) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, 16)
	)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			key := fmt.Sprintf("%s/file-%04d.md", dir, i)
			if _, err := s.Put(ctx, key, []byte(fmt.Sprintf("line 1 of %s\nline 2\n", key)), blob.Cond{}); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return fmt.Errorf("seeding %s: %d failed, first: %w", dir, len(errs), errs[0])
	}
	return nil
}

// TestDirMoveMinIO renames a 500-file directory through the handler on
// MinIO, then deletes it, and logs the storage calls, the HTTP requests
// and the wall time of each. CLOUDMEM_BENCH_DIRMOVE_TARGETS (a
// comma-separated list of bench targets, "minio" when unset) measures
// other stores the same way.
func TestDirMoveMinIO(t *testing.T) {
	dirMoveEnabled(t)
	targets := os.Getenv("CLOUDMEM_BENCH_DIRMOVE_TARGETS")
	if targets == "" {
		targets = "minio"
	}
	for name := range strings.SplitSeq(targets, ",") {
		t.Run(name, func(t *testing.T) { dirMove(t, name) })
	}
}

// dirMoveRounds is how many times each way of renaming is measured; the
// median is logged.
const dirMoveRounds = 3

// coreOnly hides every capability of the store it wraps: through it the
// handler renames with the five core calls alone (Get and Put(IfAbsent) to
// copy, Delete(IfVersion) per source), as it did before blob.Copier and
// blob.BatchDeleter, so both ways are measured on the same server at the
// same moment.
type coreOnly struct{ blob.Store }

func dirMove(t *testing.T, name string) {
	ctx := t.Context()
	tg := openMeasured(t, "dirmove", name)
	if err := seedDir(ctx, tg.store, "big", dirMoveFiles); err != nil {
		t.Fatal(err)
	}
	type run struct {
		took     time.Duration
		requests int64
		calls    blob.Counts
	}
	measure := func(s blob.Store, what, wantText string, do func(h *memory.Handler) memory.Result) run {
		c := blob.NewCounter(s)
		h, err := memory.New(c, memory.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		before := tg.requests()
		start := time.Now()
		r := do(h)
		took := time.Since(start)
		if r.Text != wantText {
			t.Fatalf("%s: %q, want %q", what, r.Text, wantText)
		}
		return run{took, tg.requests() - before, c.Counts()}
	}
	report := func(what string, runs []run) {
		slices.SortFunc(runs, func(a, b run) int { return cmp.Compare(a.took, b.took) })
		m := runs[len(runs)/2]
		all := make([]string, len(runs))
		for i, r := range runs {
			all[i] = fmt.Sprintf("%.2f", r.took.Seconds())
		}
		t.Logf("| %s | %s | %d | %d | %.2f (of %s) | calls %+v |", name, what, dirMoveFiles, m.requests, m.took.Seconds(),
			strings.Join(all, ", "), m.calls)
	}
	// The two ways alternate, so that a load on the machine weighs on both.
	var core, capable []run
	dir := "big"
	for round := range 2 * dirMoveRounds {
		s, runs := blob.Store(tg.store), &capable
		if round%2 == 0 {
			s, runs = coreOnly{tg.store}, &core
		}
		next := "moved"
		if dir == "moved" {
			next = "big"
		}
		*runs = append(*runs, measure(s, "rename dir", "Successfully renamed /memories/"+dir+" to /memories/"+next,
			func(h *memory.Handler) memory.Result { return h.Rename(ctx, "/memories/"+dir, "/memories/"+next) }))
		if n, err := blob.ListAll(ctx, tg.store, next+"/"); err != nil || len(n) != dirMoveFiles {
			t.Fatalf("after the rename, %d files under %s/ (%v), want %d", len(n), next, err, dirMoveFiles)
		}
		dir = next
	}
	report("rename dir, core calls only (before)", core)
	report("rename dir", capable)
	del := measure(tg.store, "delete dir", "Successfully deleted /memories/"+dir, func(h *memory.Handler) memory.Result {
		return h.Delete(ctx, "/memories/"+dir)
	})
	report("delete dir", []run{del})
	if n, err := blob.ListAll(ctx, tg.store, ""); err != nil || len(n) != 0 {
		t.Fatalf("after the delete, %d keys left (%v), want 0", len(n), err)
	}
}

// TestDirMoveRedisPing renames a 2,000-file directory through the handler
// on Redis (one atomic Lua script) while another client sends PING every
// millisecond, and logs the longest PING.
func TestDirMoveRedisPing(t *testing.T) {
	dirMoveEnabled(t)
	ctx := t.Context()
	tg := openMeasured(t, "dirmove", "redis")
	if err := seedDir(ctx, tg.store, "big", redisRenameFiles); err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(tg.store, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	other := goredis.NewClient(&goredis.Options{Addr: os.Getenv("CLOUDMEM_TEST_REDIS_ADDR")})
	defer other.Close()

	for round := range 3 {
		from, to := "/memories/big", "/memories/moved"
		if round%2 == 1 {
			from, to = to, from
		}
		var (
			worst, idle time.Duration
			pings       int
			stop        = make(chan struct{})
			done        = make(chan error, 1)
		)
		// The idle PING, for comparison.
		for range 20 {
			start := time.Now()
			if err := other.Ping(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			idle = max(idle, time.Since(start))
		}
		go func() {
			for {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				start := time.Now()
				if err := other.Ping(ctx).Err(); err != nil {
					done <- err
					return
				}
				worst = max(worst, time.Since(start))
				pings++
				time.Sleep(time.Millisecond)
			}
		}()
		start := time.Now()
		r := h.Rename(ctx, from, to)
		took := time.Since(start)
		time.Sleep(5 * time.Millisecond)
		close(stop)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if want := "Successfully renamed " + from + " to " + to; r.Text != want {
			t.Fatalf("%q, want %q", r.Text, want)
		}
		t.Logf("redis rename of %d files: %.1f ms; other client's PING: worst %.2f ms over %d (idle worst %.2f ms)",
			redisRenameFiles, float64(took.Microseconds())/1000, float64(worst.Microseconds())/1000, pings,
			float64(idle.Microseconds())/1000)
	}
}
