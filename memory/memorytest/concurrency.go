package memorytest

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Concurrency: docs/spec.md "Concurrency, limits and failures". Several agents
// share one store and no update is lost.

const (
	writers = 16 // goroutines, each with its own Handler
	perEach = 50 // lines each inserter adds
)

// conflict is the text of a command that lost its race more often than the
// handler retries. The contract says nothing was changed, so the test,
// like the model, sends the command again.
func conflict(path string) string {
	return "Error: The file " + path + " was changed by another writer at the same time; no change was made. Try the command again."
}

// maxAttempts bounds how often one command is sent again after conflicts.
const maxAttempts = 200

// RunConcurrency runs the races of the contract on one store from newStore,
// shared by 16 goroutines that each have their own Handler: concurrent
// inserts into one file, concurrent creates of one path, concurrent
// str_replace edits of one file, and RunFileOrDirectory. newStore must
// return an empty store.
func RunConcurrency(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Helper()
	RunConcurrencyWith(t, newStore, ConcurrencyOptions{})
}

// ConcurrencyOptions adjusts RunConcurrencyWith for a store that cannot
// prove a part of the contract.
type ConcurrencyOptions struct {
	// Skip maps a subtest's name (one of ConcurrencySubtests) to the reason
	// the store cannot pass it, which the subtest prints with t.Skip. A
	// name that is no subtest, or a missing reason, fails the run.
	Skip map[string]string
}

// ConcurrencySubtests are the names RunConcurrencyWith's subtests run
// under, as go test prints them below the caller's test.
var ConcurrencySubtests = []string{"insert", "create", "str_replace", "file limit", "file or directory/race", "file or directory/seeded both"}

// RunConcurrencyWith is RunConcurrency with options.
func RunConcurrencyWith(t *testing.T, newStore func(t *testing.T) blob.Store, opts ConcurrencyOptions) {
	t.Helper()
	for name, reason := range opts.Skip {
		if !slices.Contains(ConcurrencySubtests, name) {
			t.Errorf("ConcurrencyOptions.Skip names %q, which is no subtest (the subtests are %q)", name, ConcurrencySubtests)
		}
		if reason == "" {
			t.Errorf("ConcurrencyOptions.Skip[%q] gives no reason", name)
		}
	}
	run := func(t *testing.T, name string, f func(t *testing.T)) {
		t.Run(name[strings.LastIndexByte(name, '/')+1:], func(t *testing.T) {
			if reason, ok := opts.Skip[name]; ok {
				t.Skip(reason)
			}
			f(t)
		})
	}
	run(t, "insert", func(t *testing.T) { raceInsert(t, newStore(t)) })
	run(t, "create", func(t *testing.T) { raceCreate(t, yielding{newStore(t)}) })
	run(t, "str_replace", func(t *testing.T) { raceReplace(t, newStore(t)) })
	run(t, "file limit", func(t *testing.T) { raceFileLimit(t, yielding{newStore(t)}) })
	t.Run("file or directory", func(t *testing.T) {
		run(t, "file or directory/race", func(t *testing.T) { raceFileOrDirectory(t, yielding{newStore(t)}) })
		run(t, "file or directory/seeded both", func(t *testing.T) { seededBoth(t, newStore) })
	})
}

// yielding lets other goroutines run before each call it forwards, which
// widens the window between a create's checks and its write, where a store
// whose IfAbsent is not exact lets two writers in. (create needs neither
// blob.Tree, which it hides; it forwards blob.Traits.HidesUnderObjects.)
type yielding struct{ blob.Store }

func (y yielding) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	runtime.Gosched()
	return y.Store.Get(ctx, key, limit)
}

func (y yielding) Stat(ctx context.Context, key string) (blob.Info, error) {
	runtime.Gosched()
	return y.Store.Stat(ctx, key)
}

func (y yielding) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	runtime.Gosched()
	return y.Store.Put(ctx, key, data, c)
}

func (y yielding) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	runtime.Gosched()
	return y.Store.List(ctx, prefix)
}

// Traits are the store's: the handler runs the protocol the store needs.
func (y yielding) Traits() blob.Traits { return blob.TraitsOf(y.Store) }

func newHandler(t *testing.T, s blob.Store) *memory.Handler {
	t.Helper()
	h, err := memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("memory.New: %v", err)
	}
	return h
}

// newHandlers returns one Handler over s per writer.
func newHandlers(t *testing.T, s blob.Store) []*memory.Handler {
	t.Helper()
	hs := make([]*memory.Handler, writers)
	for i := range hs {
		hs[i] = newHandler(t, s)
	}
	return hs
}

// race runs f(i) in writers goroutines released at the same instant.
func race(f func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			f(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// execute sends input until it is not a conflict, and returns the final
// result and the number of conflicts met.
func execute(t *testing.T, h *memory.Handler, input, path string) (memory.Result, int) {
	for n := range maxAttempts {
		r := h.Execute(t.Context(), []byte(input))
		if r.Text != conflict(path) || !r.IsError {
			return r, n
		}
	}
	t.Errorf("input %q: still in conflict after %d attempts", input, maxAttempts)
	return memory.Result{}, maxAttempts
}

func readFile(t *testing.T, s blob.Store, key string) string {
	t.Helper()
	data, _, err := s.Get(t.Context(), key, blob.MaxObjectBytes)
	if err != nil {
		t.Fatalf("Get %q: %v", key, err)
	}
	return string(data)
}

// raceInsert: each writer inserts its 50 lines at the top of one file. In
// the end every line is there exactly once, and each writer's lines appear
// in the reverse of the order it inserted them.
func raceInsert(t *testing.T, s blob.Store) {
	const path = "/memories/shared.md"
	if r := newHandler(t, s).Execute(t.Context(), []byte(createInput(path, ""))); !same(r, ok(created(path))) {
		t.Fatalf("create: %s", describe(r))
	}
	var conflicts sync.Map
	handlers := newHandlers(t, s)
	race(func(i int) {
		h := handlers[i]
		for j := range perEach {
			r, n := execute(t, h, insertInput(path, 0, fmt.Sprintf("w%02d-l%02d", i, j)), path)
			if !same(r, ok(edited(path))) {
				t.Errorf("writer %d, line %d: %s", i, j, describe(r))
			}
			conflicts.Store([2]int{i, j}, n)
		}
	})
	logConflicts(t, &conflicts)

	content := readFile(t, s, "shared.md")
	lines, final := strings.CutSuffix(content, "\n")
	if !final {
		t.Errorf("the file lost its final newline: ends %q", content[max(0, len(content)-20):])
	}
	got := strings.Split(lines, "\n")
	seen := map[string]int{}
	last := map[int]int{} // writer -> the line number it was last seen at
	for _, line := range got {
		seen[line]++
		var w, l int
		if _, err := fmt.Sscanf(line, "w%02d-l%02d", &w, &l); err != nil {
			t.Errorf("unexpected line %q", line)
			continue
		}
		if prev, ok := last[w]; ok && l >= prev {
			t.Errorf("writer %d: line %02d is below line %02d, but was inserted at the top after it", w, prev, l)
		}
		last[w] = l
	}
	for i := range writers {
		for j := range perEach {
			if line := fmt.Sprintf("w%02d-l%02d", i, j); seen[line] != 1 {
				t.Errorf("line %q appears %d times, want once", line, seen[line])
			}
		}
	}
	if len(got) != writers*perEach {
		t.Errorf("the file has %d lines, want %d", len(got), writers*perEach)
	}
}

// raceCreate: every writer creates the same path with its own content; one
// wins, the others are told the file exists, and the file is the winner's.
// It runs many rounds, for a race window may be narrow.
func raceCreate(t *testing.T, s blob.Store) {
	for round := range 24 {
		// At the root, in a new directory, in an existing one.
		path := []string{"/memories/race%d.md", "/memories/new%d/dir/race.md", "/memories/new1/r%d"}[round%3]
		path = fmt.Sprintf(path, round)
		results := make([]memory.Result, writers)
		handlers := newHandlers(t, s)
		race(func(i int) {
			results[i] = handlers[i].Execute(t.Context(), []byte(createInput(path, fmt.Sprintf("round %d, writer %02d", round, i))))
		})
		winner := -1
		for i, r := range results {
			switch {
			case same(r, ok(created(path))):
				if winner >= 0 {
					t.Errorf("%s: writers %d and %d both created it", path, winner, i)
				}
				winner = i
			case same(r, fail(exists(path))):
			default:
				t.Errorf("%s: writer %d: %s", path, i, describe(r))
			}
		}
		if winner < 0 {
			t.Errorf("%s: nobody created it", path)
			continue
		}
		key := strings.TrimPrefix(path, "/memories/")
		if got, want := readFile(t, s, key), fmt.Sprintf("round %d, writer %02d", round, winner); got != want {
			t.Errorf("%s holds %q, want the winner's %q", path, got, want)
		}
	}
}

// raceReplace: the file holds one placeholder per writer and line; each
// writer replaces its own, one by one. In the end every replacement is
// there and no placeholder is.
func raceReplace(t *testing.T, s blob.Store) {
	const (
		path   = "/memories/board.md"
		rounds = 10
	)
	placeholder := func(i, j int) string { return fmt.Sprintf("<<P%02d-%d>>", i, j) }
	done := func(i, j int) string { return fmt.Sprintf("done by %02d (%d)", i, j) }
	var lines, want []string
	for j := range rounds {
		for i := range writers {
			lines = append(lines, fmt.Sprintf("slot %02d-%d: %s", i, j, placeholder(i, j)))
			want = append(want, fmt.Sprintf("slot %02d-%d: %s", i, j, done(i, j)))
		}
	}
	if _, err := s.Put(t.Context(), "board.md", []byte(strings.Join(lines, "\n")+"\n"), blob.Cond{}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	var conflicts sync.Map
	handlers := newHandlers(t, s)
	race(func(i int) {
		h := handlers[i]
		for j := range rounds {
			r, n := execute(t, h, replaceInput(path, placeholder(i, j), done(i, j)), path)
			conflicts.Store([2]int{i, j}, n)
			// The snippet's other lines depend on the other writers; our
			// own line, with its number, must be in it.
			own := fmt.Sprintf("%6d\tslot %02d-%d: %s", j*writers+i+1, i, j, done(i, j))
			rest, found := strings.CutPrefix(r.Text, strReplaced(""))
			if r.IsError || !found || !slices.Contains(strings.Split(rest, "\n"), own) {
				t.Errorf("writer %d, round %d: %s; want the snippet to hold %q", i, j, describe(r), own)
			}
		}
	})
	logConflicts(t, &conflicts)
	got := readFile(t, s, "board.md")
	if got == strings.Join(want, "\n")+"\n" {
		return
	}
	gotLines := strings.Split(got, "\n")
	for i, w := range want {
		if i >= len(gotLines) || gotLines[i] != w {
			t.Errorf("board line %d: want %q", i+1, w)
		}
	}
	if len(gotLines) != len(want)+1 {
		t.Errorf("board has %d lines, want %d and a final newline", len(gotLines), len(want))
	}
}

func logConflicts(t *testing.T, conflicts *sync.Map) {
	total := 0
	conflicts.Range(func(_, n any) bool { total += n.(int); return true })
	if total > 0 {
		t.Logf("%d commands were sent again after the handler ran out of retries", total)
	}
}
