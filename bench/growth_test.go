package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// TestServerGrowth times single storage calls on a store of 100 files and
// on one of 10,000, each kind of call alone, to show which of a server's
// requests get slower as its bucket fills: the scale test's create makes
// the same 7 or 8 calls at every size, yet takes longer on some emulators.
// It is a measurement, not a timed test: it runs only when
// CLOUDMEM_BENCH_GROWTH is set (to "1"), and then fails loudly when a
// server is missing. CLOUDMEM_BENCH_GROWTH_TARGETS (comma-separated bench
// targets, "fake-gcs,azurite" when unset) names the stores. Run it with
//
//	eval "$(bash integration/emulators.sh env)"
//	cd bench && CLOUDMEM_BENCH_GROWTH=1 go test -count=1 -timeout 30m -run TestServerGrowth -v .
//
// (filling fake-gcs-server with 10,000 files takes minutes, each write
// slower than the one before).
func TestServerGrowth(t *testing.T) {
	if os.Getenv("CLOUDMEM_BENCH_GROWTH") == "" {
		t.Skip("a measurement: set CLOUDMEM_BENCH_GROWTH=1 to run it against the emulators")
	}
	targets := os.Getenv("CLOUDMEM_BENCH_GROWTH_TARGETS")
	if targets == "" {
		targets = "fake-gcs,azurite"
	}
	for name := range strings.SplitSeq(targets, ",") {
		t.Run(name, func(t *testing.T) { serverGrowth(t, name) })
	}
}

// growthCalls is how many times each call is timed at each size, after
// growthWarmup untimed calls.
const (
	growthCalls  = 30
	growthWarmup = 3
)

func serverGrowth(t *testing.T, name string) {
	ctx := t.Context()
	s := openMeasured(t, "growth", name).store
	calls := []struct {
		name string
		do   func(ctx context.Context, i int) error
	}{
		{"Get of a 2 KB file", func(ctx context.Context, _ int) error {
			_, _, err := s.Get(ctx, "t0/note-00000.md", blob.MaxObjectBytes)
			return err
		}},
		{"Stat of a missing key", func(ctx context.Context, _ int) error {
			if _, err := s.Stat(ctx, "t0/missing.md"); !errors.Is(err, blob.ErrNotExist) {
				return fmt.Errorf("Stat of a missing key: %v", err)
			}
			return nil
		}},
		{"List of an empty directory", func(ctx context.Context, _ int) error {
			for info, err := range s.List(ctx, "t0/missing.md/") {
				if err != nil {
					return err
				}
				return fmt.Errorf("List of an empty directory found %s", info.Key)
			}
			return nil
		}},
		{"Put(IfAbsent) of a new key, then its Delete(IfVersion)", func(ctx context.Context, i int) error {
			key := fmt.Sprintf("t0/new-%d.md", i)
			info, err := s.Put(ctx, key, []byte(text2K), blob.Cond{IfAbsent: true})
			if err != nil {
				return err
			}
			return s.Delete(ctx, key, blob.Cond{IfVersion: info.Version})
		}},
	}
	sizes := []int{100, 10000}
	p50 := make([][]time.Duration, len(calls))
	written := 0
	for _, n := range sizes {
		keys := make([]string, 0, n-written)
		for i := written; i < n; i++ {
			keys = append(keys, fmt.Sprintf("t%d/note-%05d.md", i%10, i))
		}
		if err := parallel(ctx, len(keys), func(ctx context.Context, i int) error {
			_, err := s.Put(ctx, keys[i], []byte(text2K), blob.Cond{})
			return err
		}); err != nil {
			t.Fatalf("populating %d files: %v", n, err)
		}
		written = n
		for c, call := range calls {
			for i := range growthWarmup {
				if err := call.do(ctx, growthCalls+i); err != nil {
					t.Fatalf("%s at %d files: %v", call.name, n, err)
				}
			}
			times := make([]time.Duration, growthCalls)
			for i := range times {
				start := time.Now()
				if err := call.do(ctx, i); err != nil {
					t.Fatalf("%s at %d files: %v", call.name, n, err)
				}
				times[i] = time.Since(start)
			}
			p50[c] = append(p50[c], median(times))
		}
	}
	for c, call := range calls {
		t.Logf("| %s | %s | %s | %s | %.1fx |", name, call.name, fmtDur(p50[c][0]), fmtDur(p50[c][1]),
			float64(p50[c][1])/float64(p50[c][0]))
	}
}
