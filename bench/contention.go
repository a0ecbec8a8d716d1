package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// The contention flags: which levels run, how many inserts each makes, and
// whether the run measures contention alone (for example before and after a
// change to the retries, -backends minio,fake-gcs,azurite -contention-only).
var (
	contentionOnly    = flag.Bool("contention-only", false, "run only the contention test")
	contentionWriters = flag.String("contention-writers", "", "the contention levels, comma-separated writer counts (default 1,4,16,64)")
	contentionEdits   = flag.Int("contention-edits", 0, "inserts per contention level (default 512 on in-process stores, 128 on servers)")
)

// contentionPlan returns the levels and the inserts per level for a target
// (remote or not), from the plan and the flags that override it.
func contentionPlan(p plan, remote bool) (levels []int, edits int, err error) {
	levels, edits = p.levels, p.editsLocal
	if remote {
		edits = p.editsRemote
	}
	if *contentionEdits > 0 {
		edits = *contentionEdits
	}
	if *contentionWriters == "" {
		return levels, edits, nil
	}
	levels = nil
	for f := range strings.SplitSeq(*contentionWriters, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, 0, fmt.Errorf("-contention-writers: %q is not a writer count", f)
		}
		levels = append(levels, n)
	}
	return levels, edits, nil
}

// contentionAlone is the run of -contention-only on t: the contention
// levels and nothing else. It writes the SDK floor's object, which closing
// the target deletes (GCS and Azure refuse to delete an object that is not
// there).
func contentionAlone(ctx context.Context, t *target, p plan, rep *report, logf func(string, ...any)) error {
	if t.sdk != nil {
		if err := t.sdk.setup(ctx, []byte(text2K)); err != nil {
			return err
		}
	}
	return contention(ctx, t, p, rep, logf)
}

// contention runs the contention levels on t, logs each and adds it to rep.
func contention(ctx context.Context, t *target, p plan, rep *report, logf func(string, ...any)) error {
	levels, edits, err := contentionPlan(p, t.remote)
	if err != nil {
		return err
	}
	if t.remote { // the report's text names the counts the run made
		rep.plan.editsRemote = edits
	} else {
		rep.plan.editsLocal = edits
	}
	for _, r := range runContention(ctx, t, levels, edits, p.contentionTimeout) {
		logf("%-9s %2d writers: %d edits, %.0f edits/s, %.2f retries/edit, %d gave up (%.1f%%), %d lost, %d duplicated, err %v",
			t.name, r.writers, r.edits, r.editsPerS(), r.retriesPerEdit(), r.gaveUp, r.gaveUpPercent(), r.lost, r.dup, r.err)
		rep.contention = append(rep.contention, r)
	}
	return nil
}

// tally is what both contention tests count of one level.
type tally struct {
	edits   int           // inserts reported done
	elapsed time.Duration // from the release to the last answer
	gaveUp  int           // inserts answered "changed by another writer" (then sent again)
	lost    int           // lines reported inserted that are not in the file
	dup     int           // lines present more than once
}

// add counts o into r, as one more run of the same level.
func (r *tally) add(o tally) {
	r.edits += o.edits
	r.elapsed += o.elapsed
	r.gaveUp += o.gaveUp
	r.lost += o.lost
	r.dup += o.dup
}

func (r *tally) editsPerS() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.edits) / r.elapsed.Seconds()
}

// gaveUpPercent is the share of inserts answered "changed by another
// writer", in percent of the inserts done.
func (r *tally) gaveUpPercent() float64 {
	if r.edits == 0 {
		return 0
	}
	return 100 * float64(r.gaveUp) / float64(r.edits)
}

// checkLines adds to lost and dup the lines of done that the file content
// data lacks or holds more than once.
func (r *tally) checkLines(data []byte, done []string) {
	seen := map[string]int{}
	for line := range strings.SplitSeq(string(data), "\n") {
		seen[line]++
	}
	for _, line := range done {
		switch seen[line] {
		case 0:
			r.lost++
		case 1:
		default:
			r.dup++
		}
	}
}

// contentionResult is one level of the contention test: writers handlers
// inserting lines into one file at the same time.
type contentionResult struct {
	tally
	backend   string
	writers   int
	conflicts int64 // Puts refused because another writer got there first
	err       error
}

func (r *contentionResult) retriesPerEdit() float64 {
	if r.edits == 0 {
		return 0
	}
	return float64(r.conflicts) / float64(r.edits)
}

// conflictCounter counts the Puts that fail their condition.
type conflictCounter struct {
	blob.Store
	n atomic.Int64
}

// Lock forwards the store's per-key lock, so that the handlers contend as
// they would on the store itself.
func (c *conflictCounter) Lock(ctx context.Context, key string) (func(), error) {
	return blob.Lock(ctx, c.Store, key)
}

var _ blob.Locker = (*conflictCounter)(nil)

func (c *conflictCounter) Put(ctx context.Context, key string, data []byte, cond blob.Cond) (blob.Info, error) {
	info, err := c.Store.Put(ctx, key, data, cond)
	if errors.Is(err, blob.ErrPrecondition) {
		c.n.Add(1)
	}
	return info, err
}

// conflictText is in the answer of a command that lost every race.
const conflictText = "was changed by another writer at the same time; no change was made"

// runContention runs each level: writers goroutines, each with its own
// handler over t's store, insert at the top of one file until edits lines
// in total (rounded up to a multiple of writers) went in. Every writer
// starts at once (a barrier), and the clock starts when they are released.
// An insert that lost every race is sent again, as the model is told to.
// Then the file must hold every line reported inserted exactly once.
func runContention(ctx context.Context, t *target, levels []int, edits int, timeout time.Duration) []contentionResult {
	var out []contentionResult
	for _, writers := range levels {
		r := contend(ctx, t, writers, (edits+writers-1)/writers, timeout)
		out = append(out, r)
	}
	return out
}

func contend(ctx context.Context, t *target, writers, perWriter int, timeout time.Duration) contentionResult {
	r := contentionResult{backend: t.name, writers: writers}
	key := fmt.Sprintf("contention/w%d.md", writers)
	path := "/memories/" + key
	if _, err := t.store.Put(ctx, key, []byte(text2K), blob.Cond{}); err != nil {
		r.err = err
		return r
	}
	cs := &conflictCounter{Store: t.store}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		done    []string
		gaveUp  int
		errs    []error
		ready   sync.WaitGroup
		release = make(chan struct{})
	)
	handlers := make([]*memory.Handler, writers)
	for w := range handlers {
		h, err := memory.New(cs, memory.Options{Logger: quiet})
		if err != nil {
			r.err = err
			return r
		}
		handlers[w] = h
	}
	for w, h := range handlers {
		ready.Add(1)
		wg.Go(func() {
			ready.Done()
			<-release
			for e := range perWriter {
				line := fmt.Sprintf("w%02d-e%04d", w, e)
				in := input("command", "insert", "path", path, "insert_line", 0, "insert_text", line)
				for {
					res := h.Execute(ctx, in)
					if !res.IsError {
						break
					}
					if !strings.Contains(res.Text, conflictText) || ctx.Err() != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("writer %d: %s", w, res.Text))
						mu.Unlock()
						return
					}
					mu.Lock()
					gaveUp++
					mu.Unlock()
				}
				mu.Lock()
				done = append(done, line)
				mu.Unlock()
			}
		})
	}
	ready.Wait()
	start := time.Now()
	close(release)
	wg.Wait()
	r.elapsed = time.Since(start)
	r.edits, r.gaveUp, r.conflicts = len(done), gaveUp, cs.n.Load()
	if err := errors.Join(errs...); err != nil {
		r.err = err
	}

	// Check with a fresh context: the writers' may have expired.
	data, _, err := t.store.Get(context.WithoutCancel(ctx), key, blob.MaxObjectBytes)
	if err != nil {
		r.err = errors.Join(r.err, err)
		return r
	}
	r.checkLines(data, done)
	if want := strings.Count(text2K, "\n") + len(done); strings.Count(string(data), "\n") != want && r.err == nil {
		r.err = fmt.Errorf("the file has %d lines, want %d", strings.Count(string(data), "\n"), want)
	}
	return r
}
