package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// A variant is one way of performing a command: through the memory handler,
// or as the floor (the same storage calls issued directly). Each run may be
// surrounded by untimed work: prepare (for example writing the file a delete
// removes) and cleanup (deleting the file a create made).
type variant struct {
	name    string
	prepare func(ctx context.Context, i int) error // untimed, before run; may be nil
	run     func(ctx context.Context, i int) error // timed
	cleanup func(ctx context.Context, i int) error // untimed, after run; may be nil

	counter  *blob.Counter // counts the storage calls of run; nil: not counted
	requests func() int64  // requests sent to the server so far; nil: not countable
}

// budget says how often to repeat each variant: warmup untimed runs, then
// timed runs until at least minIters were made and the time spent reached
// wall, or maxIters were made, whichever comes first.
type budget struct {
	warmup   int
	minIters int
	maxIters int
	wall     time.Duration
}

// stats summarises the timed runs of one variant.
type stats struct {
	n        int
	p50, p99 time.Duration
	mean     time.Duration
	opsPerS  float64     // runs per second of timed work: 1/mean
	calls    blob.Counts // storage calls of the run with the most calls
	requests int64       // requests of the run with the most requests; -1 when not countable
}

// measure runs every variant repeatedly, interleaved: iteration i runs all
// of them once, starting with variant i mod len(vs), so that drift in the
// machine's load affects each alike. The i passed to a variant counts its
// own runs, warmup included, from 0. It stops at the first error.
func measure(ctx context.Context, vs []*variant, b budget) ([]stats, error) {
	samples := make([][]time.Duration, len(vs))
	calls := make([]blob.Counts, len(vs))
	reqs := make([]int64, len(vs))
	runs := make([]int, len(vs))
	one := func(k int, timed bool) error {
		v := vs[k]
		i := runs[k]
		runs[k]++
		if v.prepare != nil {
			if err := v.prepare(ctx, i); err != nil {
				return fmt.Errorf("%s: prepare: %w", v.name, err)
			}
		}
		if v.counter != nil {
			v.counter.Reset()
		}
		var r0 int64
		if v.requests != nil {
			r0 = v.requests()
		}
		start := time.Now()
		err := v.run(ctx, i)
		d := time.Since(start)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		if timed {
			samples[k] = append(samples[k], d)
			if v.counter != nil {
				if c := v.counter.Counts(); c.Total() > calls[k].Total() {
					calls[k] = c
				}
			}
			if v.requests != nil {
				reqs[k] = max(reqs[k], v.requests()-r0)
			}
		}
		if v.cleanup != nil {
			if err := v.cleanup(ctx, i); err != nil {
				return fmt.Errorf("%s: cleanup: %w", v.name, err)
			}
		}
		return nil
	}
	for i := range b.warmup {
		for j := range vs {
			if err := one((i+j)%len(vs), false); err != nil {
				return nil, err
			}
		}
	}
	start := time.Now()
	for i := 0; i < b.maxIters && (i < b.minIters || time.Since(start) < b.wall); i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for j := range vs {
			if err := one((i+j)%len(vs), true); err != nil {
				return nil, err
			}
		}
	}
	out := make([]stats, len(vs))
	for k, v := range vs {
		out[k] = summarise(samples[k])
		out[k].calls = calls[k]
		out[k].requests = reqs[k]
		if v.requests == nil {
			out[k].requests = -1
		}
	}
	return out, nil
}

// summarise computes the percentiles (nearest rank) and the mean of a set
// of latencies.
func summarise(lat []time.Duration) stats {
	if len(lat) == 0 {
		return stats{}
	}
	sorted := slices.Clone(lat)
	slices.Sort(sorted)
	var total time.Duration
	for _, d := range sorted {
		total += d
	}
	mean := total / time.Duration(len(sorted))
	s := stats{
		n:    len(sorted),
		p50:  percentile(sorted, 50),
		p99:  percentile(sorted, 99),
		mean: mean,
	}
	if total > 0 {
		s.opsPerS = float64(len(sorted)) / total.Seconds()
	}
	return s
}

// percentile returns the nearest-rank p-th percentile of sorted, which must
// not be empty: the smallest value with at least p% of the values at or
// below it.
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100 // ⌈p·n/100⌉
	return sorted[max(rank, 1)-1]
}
