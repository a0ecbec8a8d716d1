// Command bench measures every memory command on every backend against
// the floor the backend allows, and writes the results as Markdown, CSV and
// a PNG plot. It is a module of its own, so that its plotting dependency
// stays out of the library's go.mod. Run it with the storage emulators up
// (bench/run.sh starts them), from this directory:
//
//	go run . -out ../docs
//
// It writes benchmarks.md, benchmarks.csv and benchmarks.png in the -out
// directory (see docs/benchmarks.md for what is measured and how), and
// exits with status 1 when a measurement failed, when a command made more
// storage calls than the handler's call table allows, or when the
// contention test lost an edit. -quick runs a few iterations of everything
// on small stores: it checks that the benchmark works, and measures
// nothing worth reading.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// config is what a run measures and where it writes.
type config struct {
	out      string   // the output directory
	backends []string // target names, in order
	quick    bool
	servers  string // the servers' versions, for the report
	args     string // the command line, for the report
}

// plan holds the repetition counts of a run.
type plan struct {
	local, remote           budget // per command: in-process stores, stores behind a server
	scaleLocal, scaleRemote budget
	levels                  []int // concurrent writers
	editsLocal, editsRemote int   // inserts per contention level
	contentionTimeout       time.Duration
	sizes                   []int // store sizes of the scale test
	// The process contention test: its levels (the first is the one
	// writer the others are compared with), the inserts per level, and
	// how many times the levels run, one after the other in turn.
	processLevels []processLevel
	processEdits  int
	processRounds int
}

func planFor(quick bool) plan {
	if quick {
		b := budget{warmup: 1, minIters: 3, maxIters: 3}
		return plan{
			local: b, remote: b, scaleLocal: b, scaleRemote: b,
			levels: []int{1, 4}, editsLocal: 8, editsRemote: 8, contentionTimeout: time.Minute,
			sizes:         []int{120, 150},
			processLevels: []processLevel{{1, 1}, {4, 1}, {4, 4}}, processEdits: 8, processRounds: 1,
		}
	}
	return plan{
		local:             budget{warmup: 5, minIters: 200, maxIters: 20000, wall: 2 * time.Second},
		remote:            budget{warmup: 3, minIters: 30, maxIters: 1000, wall: 4 * time.Second},
		scaleLocal:        budget{warmup: 2, minIters: 20, maxIters: 1000, wall: time.Second},
		scaleRemote:       budget{warmup: 1, minIters: 10, maxIters: 100, wall: 2 * time.Second},
		levels:            []int{1, 4, 16, 64},
		editsLocal:        512,
		editsRemote:       128,
		contentionTimeout: 5 * time.Minute,
		sizes:             []int{100, 1000, 10000},
		processLevels:     []processLevel{{1, 1}, {64, 1}, {64, 64}},
		processEdits:      512,
		processRounds:     5,
	}
}

func main() {
	log.SetFlags(log.Ltime)
	var cfg config
	var backends string
	flag.StringVar(&cfg.out, "out", ".", "the directory to write benchmarks.md, benchmarks.csv and benchmarks.png in")
	flag.StringVar(&backends, "backends", strings.Join(allTargets, ","), "the backends to measure, comma-separated")
	flag.BoolVar(&cfg.quick, "quick", false, "run a few iterations on small stores (a check of the benchmark, not a measurement)")
	flag.StringVar(&cfg.servers, "servers", "", "the servers' versions, for the report")
	flag.Parse()
	if flag.NArg() > 0 {
		log.Fatalf("unexpected arguments: %q", flag.Args())
	}
	cfg.backends = strings.Split(backends, ",")
	cfg.args = commandLine(os.Args[1:])

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg, log.Printf)
	if rep != nil {
		if werr := rep.write(cfg.out); werr != nil {
			log.Printf("writing the report: %v", werr)
			err = werr
		} else {
			log.Printf("wrote %s", filepath.Join(cfg.out, "benchmarks.{md,csv,png}"))
		}
		for _, p := range rep.problems() {
			log.Printf("FAIL: %s", p)
		}
		if len(rep.problems()) > 0 && err == nil {
			err = fmt.Errorf("%d problems", len(rep.problems()))
		}
	}
	if err != nil {
		log.Printf("bench: %v", err)
		os.Exit(1)
	}
}

// commandLine returns the command that ran with args, for the report,
// leaving out the -servers text, which the report shows on its own.
func commandLine(args []string) string {
	out := []string{"go run ."}
	for i := 0; i < len(args); i++ {
		switch a := strings.TrimLeft(args[i], "-"); {
		case a == "servers":
			i++ // and its value
		case strings.HasPrefix(a, "servers="):
		default:
			out = append(out, args[i])
		}
	}
	return strings.Join(out, " ")
}

// run measures every backend of cfg in turn. It returns the report so far
// with any error that stopped it; failures of one backend are recorded in
// the report and the next backend runs.
func run(ctx context.Context, cfg config, logf func(string, ...any)) (*report, error) {
	p := planFor(cfg.quick)
	tmp, err := os.MkdirTemp("", "cloudmem-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	e := &env{runID: time.Now().UTC().Format("20060102T150405"), tmp: tmp}
	rep := &report{
		cfg: cfg, plan: p, machine: readMachine(), started: time.Now(), loadStart: loadAverage(),
		loads: map[string]string{},
	}
	defer func() { rep.finished, rep.loadEnd = time.Now(), loadAverage() }()
	for _, name := range cfg.backends {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rep.loads[name] = loadAverage()
		logf("== %s (load average %s)", name, rep.loads[name])
		if err := runTarget(ctx, e, name, p, rep, logf); err != nil {
			rep.failures = append(rep.failures, fmt.Sprintf("%s: %v", name, err))
			logf("%s: %v", name, err)
		}
	}
	return rep, ctx.Err()
}

// runTarget runs the three parts of the benchmark on one backend.
func runTarget(ctx context.Context, e *env, name string, p plan, rep *report, logf func(string, ...any)) (err error) {
	t, err := e.open(ctx, name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := t.close(context.WithoutCancel(ctx)); cerr != nil && err == nil {
			err = fmt.Errorf("cleaning up: %w", cerr)
		}
	}()
	if *contentionOnly {
		if err := contentionAlone(ctx, t, p, rep, logf); err != nil {
			return err
		}
		return runProcesses(ctx, e, t, p, rep, logf)
	}
	if *scaleOnly {
		return scaleAlone(ctx, t, p, rep, logf)
	}
	bud, sbud := p.local, p.scaleLocal
	if t.remote {
		bud, sbud = p.remote, p.scaleRemote
	}
	cmds, err := runCommands(ctx, t, bud, logf)
	rep.cmds = append(rep.cmds, cmds...)
	if err != nil || *commandsOnly != "" {
		return err
	}
	if err := wipe(ctx, t.store); err != nil {
		return err
	}
	if err := contention(ctx, t, p, rep, logf); err != nil {
		return err
	}
	if err := runProcesses(ctx, e, t, p, rep, logf); err != nil {
		return err
	}
	if err := wipe(ctx, t.store); err != nil {
		return err
	}
	scale, err := runScale(ctx, t, p.sizes, sbud, logf)
	rep.scale = append(rep.scale, scale...)
	return err
}
