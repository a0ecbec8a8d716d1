package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// The scale test alone: go run . -scale-only -scale-ops create -scale-sizes 100,10000 -backends file,minio
var (
	scaleOnly     = flag.Bool("scale-only", false, "run only the scale test")
	scaleOpsFlag  = flag.String("scale-ops", "", "the scale test's operations, comma-separated (default all: "+strings.Join(scaleOps, ", ")+")")
	scaleSizeFlag = flag.String("scale-sizes", "", "the scale test's store sizes, comma-separated (default 100,1000,10000)")
	scalePairs    = flag.Int("scale-create-pairs", 0, "with -scale-only: instead, time this many creates on the smallest and the largest of -scale-sizes, alternating between two stores of those sizes")
)

// scaleAlone runs only the scale test on t, with the sizes and operations
// the flags give, and logs each result.
func scaleAlone(ctx context.Context, t *target, p plan, rep *report, logf func(string, ...any)) error {
	sizes := p.sizes
	if *scaleSizeFlag != "" {
		sizes = nil
		for f := range strings.SplitSeq(*scaleSizeFlag, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2*renameDirFiles {
				return fmt.Errorf("-scale-sizes: %q is no size of at least %d files", f, 2*renameDirFiles)
			}
			sizes = append(sizes, n)
		}
	}
	ops := scaleOps
	if *scaleOpsFlag != "" {
		ops = strings.Split(*scaleOpsFlag, ",")
		for _, op := range ops {
			if !slices.Contains(scaleOps, op) {
				return fmt.Errorf("-scale-ops: unknown operation %q (known: %s)", op, strings.Join(scaleOps, ", "))
			}
		}
	}
	if *scalePairs > 0 {
		return createPairs(ctx, t, slices.Min(sizes), slices.Max(sizes), *scalePairs, logf)
	}
	sbud := p.scaleLocal
	if t.remote {
		sbud = p.scaleRemote
	}
	scale, err := runScaleOps(ctx, t, sizes, ops, sbud, logf)
	rep.scale = append(rep.scale, scale...)
	return err
}

// The operations measured as the store grows.
const (
	scaleViewFile  = "view file"
	scaleViewRoot  = "view /memories"
	scaleRenameDir = "rename dir (50 files)"
	scaleCreate    = "create"
)

// scaleOps are the operations in the order of the report. scaleViewFile
// is one Get: what a read alone gains as the server's bucket fills (on
// fake-gcs-server, nothing, while its writes and listings slow down; see
// TestServerGrowth).
var scaleOps = []string{scaleViewFile, scaleViewRoot, scaleRenameDir, scaleCreate}

// scaleResult is one operation at one store size.
type scaleResult struct {
	backend, op    string
	files          int // files in the store
	handler, floor stats
	table          blob.Counts
	err            error
}

// scaleBench grows one target's store through the sizes. The store holds
// two 50-file directories (the handler's and the floor's, each renamed back
// and forth) and the rest of the files in ten directories.
type scaleBench struct {
	*cmdBench
	files int     // files written so far outside the two directories
	where [2]bool // whether the handler's (0) and the floor's (1) directory is at its -1 name
}

func runScale(ctx context.Context, t *target, sizes []int, bud budget, logf func(string, ...any)) ([]scaleResult, error) {
	return runScaleOps(ctx, t, sizes, scaleOps, bud, logf)
}

// runScaleOps is runScale for the operations ops.
func runScaleOps(ctx context.Context, t *target, sizes []int, ops []string, bud budget, logf func(string, ...any)) ([]scaleResult, error) {
	b, err := newCmdBench(ctx, t)
	if err != nil {
		return nil, err
	}
	// The file limit stays on, as it is by default, so create keeps the
	// file count; it is raised so that create still succeeds at 10,000.
	if b.h, err = memory.New(b.hc, memory.Options{Logger: quiet, MaxFiles: 1 << 30}); err != nil {
		return nil, err
	}
	sb := &scaleBench{cmdBench: b}
	var keys []string
	for _, who := range []string{"h", "f"} {
		for i := range renameDirFiles {
			keys = append(keys, fmt.Sprintf("move-%s-0/file-%02d.md", who, i))
		}
	}
	if err := sb.put(ctx, keys); err != nil {
		return nil, err
	}
	var out []scaleResult
	for _, n := range sizes {
		if err := sb.grow(ctx, n-2*renameDirFiles); err != nil {
			return out, err
		}
		for _, op := range ops {
			r := scaleResult{backend: t.name, op: op, files: n, table: sb.table(op)}
			st, err := measure(ctx, sb.variants(op), bud)
			if err != nil {
				r.err = err
				logf("%s %s at %d files: %v", t.name, op, n, err)
				if ctx.Err() != nil {
					return append(out, r), ctx.Err()
				}
			} else {
				r.handler, r.floor = st[0], st[1]
				logf("%-9s %-22s %6d files: n=%-4d cloudmem p50 %-9s floor p50 %-9s calls %d requests %d",
					t.name, op, n, r.handler.n, fmtDur(r.handler.p50), fmtDur(r.floor.p50), r.handler.calls.Total(), r.handler.requests)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// put writes text2K under every key, 16 at a time, through the handler's
// write gate, which keeps the file count.
func (sb *scaleBench) put(ctx context.Context, keys []string) error {
	data := []byte(text2K)
	err := parallel(ctx, len(keys), func(ctx context.Context, i int) error {
		_, err := sb.h.Write(ctx, memory.PathOf(keys[i]), data, "")
		return err
	})
	if err != nil {
		return fmt.Errorf("populating the store: %w", err)
	}
	return nil
}

// grow adds files until n lie outside the two renamed directories.
func (sb *scaleBench) grow(ctx context.Context, n int) error {
	var keys []string
	for i := sb.files; i < n; i++ {
		keys = append(keys, fmt.Sprintf("t%d/note-%05d.md", i%10, i))
	}
	if err := sb.put(ctx, keys); err != nil {
		return err
	}
	sb.files = max(sb.files, n)
	return nil
}

// table is the call table's allowance for op.
func (sb *scaleBench) table(op string) blob.Counts {
	switch op {
	case scaleViewFile:
		return sb.cmdBench.table(cmdViewFile)
	case scaleViewRoot:
		return blob.Counts{List: 1}
	case scaleRenameDir:
		return sb.cmdBench.table(cmdRenameDir)
	}
	return sb.cmdBench.table(cmdCreate)
}

// variants returns the handler's and the floor's variant of op.
func (sb *scaleBench) variants(op string) []*variant {
	var h, f *variant
	dir := func(who string, at bool) string {
		if at {
			return "move-" + who + "-1"
		}
		return "move-" + who + "-0"
	}
	switch op {
	case scaleViewFile:
		// A file of the floor's directory, wherever the floor's renames left it.
		key := func() string { return dir("f", sb.where[1]) + "/file-00.md" }
		h = &variant{run: func(ctx context.Context, _ int) error {
			return sb.exec(ctx, input("command", "view", "path", "/memories/"+key()))
		}}
		f = &variant{run: func(ctx context.Context, _ int) error {
			_, _, err := sb.fc.Get(ctx, key(), blob.MaxObjectBytes)
			return err
		}}
	case scaleViewRoot:
		in := input("command", "view", "path", "/memories")
		h = &variant{run: func(ctx context.Context, _ int) error { return sb.exec(ctx, in) }}
		f = &variant{run: func(ctx context.Context, _ int) error { return drain(sb.fc.List(ctx, "")) }}
	case scaleRenameDir:
		h = &variant{run: func(ctx context.Context, _ int) error {
			from, to := dir("h", sb.where[0]), dir("h", !sb.where[0])
			err := sb.exec(ctx, input("command", "rename", "old_path", "/memories/"+from, "new_path", "/memories/"+to))
			if err == nil {
				sb.where[0] = !sb.where[0]
			}
			return err
		}}
		f = &variant{run: func(ctx context.Context, _ int) error {
			err := sb.renameFloor(ctx, dir("f", sb.where[1]), dir("f", !sb.where[1]), true)
			if err == nil {
				sb.where[1] = !sb.where[1]
			}
			return err
		}}
	case scaleCreate:
		var in []byte
		h = &variant{
			prepare: func(_ context.Context, i int) error {
				in = input("command", "create", "path", fmt.Sprintf("/memories/new-h-%d.md", i), "file_text", text2K)
				return nil
			},
			run: func(ctx context.Context, _ int) error { return sb.exec(ctx, in) },
			cleanup: func(ctx context.Context, i int) error { // through the handler, which keeps the file count
				return sb.exec(ctx, input("command", "delete", "path", fmt.Sprintf("/memories/new-h-%d.md", i)))
			},
		}
		var key string
		f = &variant{
			prepare: func(_ context.Context, i int) error { key = fmt.Sprintf("new-f-%d.md", i); return nil },
			run: func(ctx context.Context, _ int) error {
				if err := drain(sb.fc.List(ctx, "")); err != nil {
					return err
				}
				_, err := sb.fc.Put(ctx, key, []byte(text2K), blob.Cond{IfAbsent: true})
				return err
			},
			cleanup: func(ctx context.Context, _ int) error { return sb.t.store.Delete(ctx, key, blob.Cond{}) },
		}
	default:
		panic("unknown scale operation " + op)
	}
	h.name, f.name = "cloudmem", "floor"
	h.counter, f.counter = sb.hc, sb.fc
	h.requests, f.requests = sb.t.requests, sb.t.requests
	return []*variant{h, f}
}

// createPairs times n creates through the handler on a store of small files
// and n on one of big files (two prefixes of t's store), one after the
// other in turn, so that the machine's load falls on both alike, and logs
// the medians and their ratio: the cost that grows with the store, apart
// from the noise of a shared machine.
func createPairs(ctx context.Context, t *target, small, big, n int, logf func(string, ...any)) error {
	var hs [2]*memory.Handler
	var times [2][]time.Duration
	for k, size := range []int{small, big} {
		s, err := blob.Prefix(t.store, fmt.Sprintf("pairs-%d", size))
		if err != nil {
			return err
		}
		keys := make([]string, size)
		for i := range keys {
			keys[i] = fmt.Sprintf("t%d/note-%05d.md", i%10, i)
		}
		data := []byte(text2K)
		if err := parallel(ctx, len(keys), func(ctx context.Context, i int) error {
			_, err := s.Put(ctx, keys[i], data, blob.Cond{})
			return err
		}); err != nil {
			return fmt.Errorf("populating %d files: %w", size, err)
		}
		if hs[k], err = memory.New(s, memory.Options{Logger: quiet, MaxFiles: 1 << 30}); err != nil {
			return err
		}
		// The first create counts the store (one listing); it is not timed.
		if r := hs[k].Execute(ctx, input("command", "create", "path", "/memories/warm.md", "file_text", text2K)); r.IsError {
			return fmt.Errorf("warm-up create: %s", r.Text)
		}
	}
	for i := range n {
		for k := range hs {
			path := fmt.Sprintf("/memories/new-%d.md", i)
			start := time.Now()
			r := hs[k].Execute(ctx, input("command", "create", "path", path, "file_text", text2K))
			d := time.Since(start)
			if r.IsError {
				return fmt.Errorf("create: %s", r.Text)
			}
			times[k] = append(times[k], d)
			if r := hs[k].Execute(ctx, input("command", "delete", "path", path)); r.IsError {
				return fmt.Errorf("delete: %s", r.Text)
			}
		}
	}
	for k := range times {
		slices.Sort(times[k])
	}
	m0, m1 := times[0][n/2], times[1][n/2]
	logf("%-9s create, %d pairs: %d files p50 %s (p25 %s, p75 %s), %d files p50 %s (p25 %s, p75 %s), ratio %.2f",
		t.name, n, small, fmtDur(m0), fmtDur(times[0][n/4]), fmtDur(times[0][3*n/4]),
		big, fmtDur(m1), fmtDur(times[1][n/4]), fmtDur(times[1][3*n/4]), float64(m1)/float64(m0))
	return nil
}
