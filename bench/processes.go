package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// The process contention test: what issue 14.2 measured. Separate
// `cloudmem exec` processes, each opening the target's store URL as a user
// would, insert lines at the top of one shared file, or each into a file of
// its own. Separate processes share nothing but the store: the file store's
// key locks must hold across processes, and each process has its own client,
// connections and retry timing.
var (
	processes       = flag.Bool("processes", true, "run the contention test with separate cloudmem exec processes too")
	processesEdits  = flag.Int("processes-edits", 0, "inserts per level of the process contention test (default 512)")
	processesRounds = flag.Int("processes-rounds", 0, "how many times the process contention test runs its levels, in turn (default 5)")
)

// processLevel is one level of the process test: writers processes
// inserting into files files (1: all into one; writers: one each).
type processLevel struct{ writers, files int }

// processResult is one level of the process test on one target, over
// every round: the tally adds the rounds up, rates holds each round's
// edits/s in the order they ran.
type processResult struct {
	tally
	backend        string
	writers, files int
	rates          []float64
	err            error
}

// add counts one round r of the same level into p.
func (p *processResult) add(r processResult) {
	p.backend, p.writers, p.files = r.backend, r.writers, r.files
	p.tally.add(r.tally)
	p.rates = append(p.rates, r.editsPerS())
	p.err = errors.Join(p.err, r.err)
}

// rate is the median round's edits/s.
func (p *processResult) rate() float64 { return median(p.rates) }

// vsOne is the median over the rounds of p's edits/s against one's in the
// same round: the machine's speed changes from minute to minute (one
// process's inserts into the file store ran at 165 to 553 a second in runs
// minutes apart), and levels that ran side by side see the same machine.
// It is 0 when the rounds do not pair up.
func (p *processResult) vsOne(one *processResult) float64 {
	if len(p.rates) != len(one.rates) || len(p.rates) == 0 {
		return 0
	}
	ratios := make([]float64, len(p.rates))
	for i := range p.rates {
		if one.rates[i] <= 0 {
			return 0
		}
		ratios[i] = p.rates[i] / one.rates[i]
	}
	return median(ratios)
}

// median returns the middle value of xs (the upper middle one when their
// number is even), or zero for none. It leaves xs as it was.
func median[T cmp.Ordered](xs []T) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// cli builds the cloudmem command once per run, into the run's directory,
// from the module this benchmark belongs to (the parent directory).
func (e *env) cli(ctx context.Context) (string, error) {
	e.cliOnce.Do(func() {
		path := filepath.Join(e.tmp, "cloudmem")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", path, "./cmd/cloudmem")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			e.cliErr = fmt.Errorf("building cloudmem: %v: %s", err, bytes.TrimSpace(out))
			return
		}
		e.cliPath = path
	})
	return e.cliPath, e.cliErr
}

// runProcesses runs the process levels on t, all of them in turn, as many
// rounds as the plan says, logs each run and adds each level's rounds to
// rep. A target without a store URL (mem, and the encrypted ones, whose key
// a process would need in a file) is left out.
func runProcesses(ctx context.Context, e *env, t *target, p plan, rep *report, logf func(string, ...any)) error {
	if !*processes || t.url == "" {
		return nil
	}
	cli, err := e.cli(ctx)
	if err != nil {
		return err
	}
	edits := p.processEdits
	if *processesEdits > 0 {
		edits = *processesEdits
	}
	rounds := p.processRounds
	if *processesRounds > 0 {
		rounds = *processesRounds
	}
	// The report's text names the counts the run made.
	rep.plan.processEdits, rep.plan.processRounds = edits, rounds
	levels := make([]processResult, len(p.processLevels))
	for round := range rounds {
		for i, l := range p.processLevels {
			r := contendProcesses(ctx, cli, t, l, edits, p.contentionTimeout)
			logf("%-9s round %d, %2d processes on %2d files: %d edits, %.0f edits/s, %d gave up (%.1f%%), %d lost, %d duplicated, err %v",
				t.name, round+1, r.writers, r.files, r.edits, r.editsPerS(), r.gaveUp, r.gaveUpPercent(), r.lost, r.dup, r.err)
			levels[i].add(r)
		}
	}
	rep.processes = append(rep.processes, levels...)
	return nil
}

// child is one `cloudmem exec` process: a command per line in, a result
// per line out.
type child struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

// wire is a result line of cloudmem exec (text results only here).
type wire struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

func startChild(ctx context.Context, cli string, t *target) (*child, error) {
	c := &child{cmd: exec.CommandContext(ctx, cli, "--store", t.url, "exec")}
	c.cmd.Env = append(os.Environ(), t.urlEnv...)
	c.cmd.Stderr = &c.stderr
	in, err := c.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	c.in, c.out = in, bufio.NewReader(out)
	return c, nil
}

// do sends one command and reads its result. A process that fails here
// has its stderr reported by stop, once it has exited: until then os/exec
// is still copying into the buffer.
func (c *child) do(command []byte) (wire, error) {
	if _, err := c.in.Write(append(command, '\n')); err != nil {
		return wire{}, fmt.Errorf("writing to cloudmem exec: %w", err)
	}
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		return wire{}, fmt.Errorf("reading from cloudmem exec: %w", err)
	}
	var w wire
	if err := json.Unmarshal(line, &w); err != nil {
		return wire{}, fmt.Errorf("a result line %q: %w", line, err)
	}
	return w, nil
}

// stop closes stdin, so the process ends at EOF, and waits for it; the
// error of a process that failed carries its stderr.
func (c *child) stop() error {
	c.in.Close()
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("cloudmem exec: %w (stderr: %s)", err, c.stderrText())
	}
	return nil
}

func (c *child) stderrText() string { return oneLine(strings.TrimSpace(c.stderr.String())) }

// contendProcesses runs one level: it seeds the files, starts every
// process and has each view its file (so that each has opened the store),
// then releases them all at once. Each inserts its share of edits lines;
// an insert answered "changed by another writer" is sent again. Afterwards
// every line reported inserted must be in its file exactly once.
func contendProcesses(ctx context.Context, cli string, t *target, l processLevel, edits int, timeout time.Duration) (r processResult) {
	r = processResult{backend: t.name, writers: l.writers, files: l.files}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	keys := make([]string, l.files)
	for f := range keys {
		keys[f] = fmt.Sprintf("processes/w%d-f%d/file-%02d.md", l.writers, l.files, f)
		if _, err := t.store.Put(ctx, keys[f], []byte(text2K), blob.Cond{}); err != nil {
			r.err = err
			return r
		}
	}
	children := make([]*child, l.writers)
	var errs []error
	defer func() {
		for _, c := range children {
			if c != nil {
				if err := c.stop(); err != nil {
					r.err = errors.Join(r.err, err)
				}
			}
		}
	}()
	for w := range children {
		c, err := startChild(ctx, cli, t)
		if err != nil {
			r.err = err
			return r
		}
		children[w] = c
	}
	// Every process opens the store and answers a view before the clock
	// starts, all at once.
	var ready sync.WaitGroup
	var mu sync.Mutex
	for w, c := range children {
		ready.Go(func() {
			res, err := c.do(input("command", "view", "path", "/memories/"+keys[w%l.files]))
			if err == nil && res.IsError {
				err = fmt.Errorf("view: %s", res.Content)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("process %d: %w", w, err))
				mu.Unlock()
			}
		})
	}
	ready.Wait()
	if len(errs) > 0 {
		r.err = errors.Join(errs...)
		return r
	}

	perWriter := (edits + l.writers - 1) / l.writers
	done := make([][]string, l.files) // lines reported inserted, per file
	release := make(chan struct{})
	var wg sync.WaitGroup
	for w, c := range children {
		wg.Go(func() {
			<-release
			f := w % l.files
			for e := range perWriter {
				line := fmt.Sprintf("p%02d-e%04d", w, e)
				in := input("command", "insert", "path", "/memories/"+keys[f], "insert_line", 0, "insert_text", line)
				for {
					res, err := c.do(in)
					if err == nil && res.IsError && strings.Contains(res.Content, conflictText) && ctx.Err() == nil {
						mu.Lock()
						r.gaveUp++
						mu.Unlock()
						continue
					}
					if err == nil && res.IsError {
						err = errors.New(res.Content)
					}
					if err != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("process %d: %w", w, err))
						mu.Unlock()
						return
					}
					break
				}
				mu.Lock()
				done[f] = append(done[f], line)
				r.edits++
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	close(release)
	wg.Wait()
	r.elapsed = time.Since(start)
	r.err = errors.Join(errs...)

	// Check with a fresh context: the writers' may have expired.
	for f, key := range keys {
		data, _, err := t.store.Get(context.WithoutCancel(ctx), key, blob.MaxObjectBytes)
		if err != nil {
			r.err = errors.Join(r.err, err)
			continue
		}
		r.checkLines(data, done[f])
		if want := strings.Count(text2K, "\n") + len(done[f]); strings.Count(string(data), "\n") != want {
			r.err = errors.Join(r.err, fmt.Errorf("%s has %d lines, want %d", key, strings.Count(string(data), "\n"), want))
		}
	}
	return r
}
