package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// TestQuick runs the whole benchmark in -quick mode over the two stores
// that need no server, and checks the report: every command measured on
// both, the exact calls of each, and well-formed CSV and PNG files.
func TestQuick(t *testing.T) {
	rep, err := run(t.Context(), config{backends: []string{"mem", "file"}, quick: true, args: "go test"}, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if p := rep.problems(); len(p) > 0 {
		t.Fatalf("problems:\n%s", strings.Join(p, "\n"))
	}
	dir := t.TempDir()
	if err := rep.write(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "benchmarks.md"))
	if err != nil {
		t.Fatal(err)
	}

	// The ratio table has a number for every command on both stores.
	for _, cmd := range commands {
		var row string
		for line := range strings.SplitSeq(string(md), "\n") {
			if strings.HasPrefix(line, "| "+cmd+" | ") {
				row = line
				break
			}
		}
		cells := strings.Split(strings.Trim(row, "| "), " | ")
		if len(cells) != 3 || strings.TrimRight(cells[1], " ✗") == "" || strings.TrimRight(cells[2], " ✗") == "" {
			t.Errorf("ratio row of %q = %q, want a ratio for mem and for file", cmd, row)
		}
	}

	// Both stores rename atomically, so every command makes exactly the
	// calls of the call table, and the report says so; on mem, which lets
	// a name be both a file and a directory, a move looks for a racing
	// create after its Rename (moveLook).
	wantCalls := `| command | mem | file |
| --- | --- | --- |
| view file | Get 1 | Get 1 |
| view dir (200 files) | Get 1 + List 1 | Get 1 + List 1 |
| create | Stat 1 + List 1 + Put 2 | Put 2 |
| str_replace | Get 1 + Put 1 | Get 1 + Put 1 |
| insert | Get 1 + Put 1 | Get 1 + Put 1 |
| delete | Delete 1 | Delete 1 |
| rename file | Stat 1 + List 1 + Rename 1 | Rename 1 |
| rename dir (50 files) | Stat 1 + Rename 1 | Rename 1 |
`
	if !strings.Contains(string(md), wantCalls) {
		t.Errorf("the storage calls table is not\n%s\nreport:\n%s", wantCalls, md)
	}

	// The process test ran its three levels on the file store (mem has no
	// URL a process could open): every insert landed once, and none gave up,
	// since writers of one file take turns under its lock across processes.
	var procRows [][]string
	inProc := false
	for line := range strings.SplitSeq(string(md), "\n") {
		switch {
		case line == "## Contention between processes":
			inProc = true
		case strings.HasPrefix(line, "## "):
			inProc = false
		case inProc && strings.HasPrefix(line, "| file | "):
			procRows = append(procRows, strings.Split(strings.Trim(line, "| "), " | "))
		}
	}
	var levels []string
	for _, c := range procRows {
		if len(c) != 8 || c[3] != "8" || c[6] != "0 (0.0%)" || c[7] != "0" {
			t.Errorf("process row %q: want 8 edits, 0 gave up, 0 lost", c)
			continue
		}
		levels = append(levels, c[1]+"x"+c[2])
	}
	if got, want := strings.Join(levels, " "), "1x1 4x1 4x4"; got != want {
		t.Errorf("process levels on file (processes x files) = %q, want %q\nreport:\n%s", got, want, md)
	}

	f, err := os.Open(filepath.Join(dir, "benchmarks.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// A header, 8 commands and 2 contention levels on each store, 3
	// process levels on file, and 4 operations at 2 sizes on each store.
	if want := 1 + 2*8 + 2*2 + 3 + 2*4*2; len(rows) != want {
		t.Errorf("the CSV has %d rows, want %d", len(rows), want)
	}

	data, err := os.ReadFile(filepath.Join(dir, "benchmarks.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := img.Bounds().Size().X, len(scaleOps)*panelW; got != want {
		t.Errorf("the plot is %d pixels wide, want %d", got, want)
	}
}

// plainStore hides the optional capabilities of the store it wraps, as the
// S3, GCS and Azure stores lack them.
type plainStore struct{ blob.Store }

// TestFallbackCalls measures the commands on a store without an atomic Rename and
// on an encrypted store (which refuses Rename), and checks that the
// handler makes exactly the calls the table gives, and the floor too, but
// for create and delete, whose floor is their one write.
func TestFallbackCalls(t *testing.T) {
	b := budget{minIters: 2, maxIters: 2}
	for _, name := range []string{"plain", "age+plain"} {
		t.Run(name, func(t *testing.T) {
			tg := &target{name: name, store: plainStore{mem.New(nil)}}
			if name == "age+plain" {
				var err error
				if tg, err = encrypted(t.Context(), name, tg); err != nil {
					t.Fatal(err)
				}
			}
			results, err := runCommands(t.Context(), tg, b, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range results {
				if r.err != nil {
					t.Errorf("%s: %v", r.command, r.err)
					continue
				}
				if r.handler.calls != r.table {
					t.Errorf("%s: the handler made %s, the table gives %s", r.command, fmtCounts(r.handler.calls), fmtCounts(r.table))
				}
				want := r.table
				switch r.command {
				case cmdCreate:
					want = blob.Counts{Put: 1}
				case cmdDelete:
					want = blob.Counts{Delete: 1}
				case cmdRenameFile, cmdRenameDir: // the floor does not look for a racing create
					look := moveLook(tg.store, false, r.command)
					want.Stat -= look.Stat
					want.List -= look.List
				}
				if r.floor.calls != want {
					t.Errorf("%s: the floor made %s, want %s", r.command, fmtCounts(r.floor.calls), fmtCounts(want))
				}
			}
		})
	}
}

// lossyStore ignores write conditions and dawdles between reading and
// writing, so that concurrent read-modify-writes overwrite each other.
type lossyStore struct{ blob.Store }

func (s lossyStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	data, info, err := s.Store.Get(ctx, key, limit)
	time.Sleep(time.Millisecond)
	return data, info, err
}

func (s lossyStore) Put(ctx context.Context, key string, data []byte, _ blob.Cond) (blob.Info, error) {
	return s.Store.Put(ctx, key, data, blob.Cond{})
}

// TestContentionFindsLostEdits checks that the contention test notices
// edits a store lost, and that the run then fails.
func TestContentionFindsLostEdits(t *testing.T) {
	tg := &target{name: "lossy", store: lossyStore{mem.New(nil)}}
	r := contend(t.Context(), tg, 4, 4, time.Minute)
	if r.lost == 0 {
		t.Fatalf("no edit lost on a store that ignores conditions: %+v", r)
	}
	rep := &report{contention: []contentionResult{r}}
	if len(rep.problems()) == 0 {
		t.Error("a run that lost edits has no problems")
	}
}

func TestPercentile(t *testing.T) {
	seq := func(n int) []time.Duration {
		out := make([]time.Duration, n)
		for i := range out {
			out[i] = time.Duration(i + 1)
		}
		return out
	}
	for _, tc := range []struct {
		n, p int
		want time.Duration
	}{
		{100, 50, 50}, {100, 99, 99}, {200, 99, 198}, {3, 50, 2}, {3, 99, 3}, {1, 50, 1}, {1, 99, 1},
	} {
		if got := percentile(seq(tc.n), tc.p); got != tc.want {
			t.Errorf("p%d of 1..%d = %d, want %d", tc.p, tc.n, got, tc.want)
		}
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "–"}, {850, "850 ns"}, {4_861, "4.86 µs"}, {94_800, "94.8 µs"}, {419_000, "419 µs"},
		{1_440_000, "1.44 ms"}, {2_500_000_000, "2.50 s"},
	} {
		if got := fmtDur(tc.d); got != tc.want {
			t.Errorf("fmtDur(%d) = %q, want %q", tc.d, got, tc.want)
		}
	}
	for e, want := range map[float64]string{-9: "1 ns", -6: "1 us", -4: "100 us", -2: "10 ms", 0: "1 s", 2: "100 s", 3: "1e3 s"} {
		if got := decade(e); got != want {
			t.Errorf("decade(%v) = %q, want %q", e, got, want)
		}
	}
	for n, want := range map[int]string{100: "100", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567"} {
		if got := withCommas(n); got != want {
			t.Errorf("withCommas(%d) = %q, want %q", n, got, want)
		}
	}
	if got, want := fmtCounts(blob.Counts{Get: 51, Stat: 1, List: 2, Put: 50, Delete: 50}), "Get 51 + Stat 1 + List 2 + Put 50 + Delete 50"; got != want {
		t.Errorf("fmtCounts = %q, want %q", got, want)
	}
}

// TestMisses checks the explanations of ratios over the target, one case
// for each kind of explanation, and the summary line.
func TestMisses(t *testing.T) {
	us := time.Microsecond
	get := blob.Counts{Get: 1}
	getPut := blob.Counts{Get: 1, Put: 1}
	res := func(backend, cmd string, h, f time.Duration, hc, fc blob.Counts, hr, fr int64) cmdResult {
		return cmdResult{backend: backend, command: cmd,
			handler: stats{p50: h, calls: hc, requests: hr}, floor: stats{p50: f, calls: fc, requests: fr}}
	}
	rep := &report{cmds: []cmdResult{
		res("mem", cmdViewFile, 2*us, 150, get, get, -1, -1),
		res("file", cmdStrReplace, 559*us, 549*us, getPut, getPut, -1, -1),
		res("file", cmdInsert, 986*us, 725*us, getPut, getPut, -1, -1),
		res("minio", cmdViewFile, 2000*us, 1000*us, blob.Counts{Get: 2}, get, 2, 1),
		res("redis", cmdViewFile, 200*us, 100*us, get, get, 2, 1),
		res("azurite", cmdViewDir, 30000*us, 20000*us, blob.Counts{Get: 1, List: 1}, blob.Counts{Get: 1, List: 1}, 2, 2),
	}}
	var w bytes.Buffer
	rep.summary(&w, []string{"mem", "file", "minio", "redis", "azurite"})
	rep.misses(&w)
	want := `1 of 6 measurements are within their target. Over it: mem (1 of 1), file (1 of 2), minio (1 of 1), redis (1 of 1), azurite (1 of 1).

### Over the target

- mem, view file: 13.33, cloudmem 2.00 µs against the floor's 150 ns (+1.85 µs a command); same storage calls, and with a floor under 100 µs the handler's fixed work (decoding the JSON, checking the path, formatting the answer) is a large ratio
- file, insert: 1.36, cloudmem 986 µs against the floor's 725 µs (+261 µs a command); same storage calls and requests, and str_replace, which makes the same calls, is at 1.02: most likely noise from the machine's load
- minio, view file: 2.00, cloudmem 2.00 ms against the floor's 1.00 ms (+1.00 ms a command); the handler made Get 2, the floor Get 1
- redis, view file: 2.00, cloudmem 200 µs against the floor's 100 µs (+100 µs a command); same storage calls, but 2 requests against the floor's 1
- azurite, view dir (200 files): 1.50, cloudmem 30.0 ms against the floor's 20.0 ms (+10.0 ms a command); same storage calls and requests: the handler's own work, or noise

`
	if got := w.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestProcessRounds checks how the process test adds its rounds up: the
// edits/s is the median round's, and vs one pairs each round with the one
// process's of the same round, so that a slow minute of the machine weighs
// on both sides of a ratio, not on one.
func TestProcessRounds(t *testing.T) {
	round := func(writers int, edits int, secs float64, gaveUp int) processResult {
		return processResult{backend: "file", writers: writers, files: 1,
			tally: tally{edits: edits, elapsed: time.Duration(secs * float64(time.Second)), gaveUp: gaveUp}}
	}
	var one, many processResult
	for _, r := range []struct {
		one, many float64 // seconds for 600 inserts
	}{{6, 20.0 / 3}, {2, 2.5}, {3, 20.0 / 7}} { // edits/s: 100/90, 300/240, 200/210
		one.add(round(1, 600, r.one, 0))
		many.add(round(64, 600, r.many, 2))
	}
	if got, want := math.Round(one.rate()), 200.0; got != want {
		t.Errorf("one's rate = %v, want the median round's %v", got, want)
	}
	if got, want := math.Round(many.rate()), 210.0; got != want {
		t.Errorf("many's rate = %v, want the median round's %v", got, want)
	}
	// Per round 0.9, 0.8 and 1.05: the median is 0.9, where the ratio of
	// the medians would say 1.05.
	if got, want := math.Round(100*many.vsOne(&one))/100, 0.9; got != want {
		t.Errorf("vs one = %v, want %v", got, want)
	}
	if many.edits != 1800 || many.gaveUp != 6 || many.writers != 64 || many.err != nil {
		t.Errorf("the rounds add up to %+v, want 1800 edits, 6 gave up, 64 writers, no error", many)
	}
	var short processResult
	short.add(round(64, 600, 2, 0))
	if got := short.vsOne(&one); got != 0 {
		t.Errorf("vs one of rounds that do not pair up = %v, want 0", got)
	}
}
