package gate_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
	"github.com/cloudmem/cloudmem/mount"
)

// race starts every writer, releases them all at once and waits for them.
func race(writers ...func()) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for _, w := range writers {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			w()
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}

// Creates into a mount and moves into it from another mount, each through
// a Tree of its own (as different programs sharing the store), released at
// once at the mount's file limit: the mount never holds more than its
// limit, every write acknowledged is there, every refused one is not, and
// no moved file is lost.
func TestCreatesAndMovesRaceAtTheLimit(t *testing.T) {
	const limit, creates, moves = 6, 6, 6
	ctx := t.Context()
	a, b := mem.New(nil), blob.WithLimits(mem.New(nil), blob.Limits{MaxFiles: limit})
	table, err := mount.New([]mount.Mount{{Name: "a", Store: a}, {Name: "b", Store: b}})
	if err != nil {
		t.Fatal(err)
	}
	tree := func() *gate.Tree {
		g, err := gate.New(table, gate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	setup := tree()
	for _, key := range []string{"b/0", "b/1"} { // 4 places left
		if _, err := setup.Create(ctx, key, []byte("x"), false); err != nil {
			t.Fatal(err)
		}
	}
	for i := range moves {
		if _, err := setup.Create(ctx, fmt.Sprintf("a/m%d", i), []byte("moved"), false); err != nil {
			t.Fatal(err)
		}
	}
	var (
		mu      sync.Mutex
		done    = map[string]bool{} // the keys in b that an acknowledged write put there
		refused int
		writers []func()
		outcome = func(key string, err error) {
			mu.Lock()
			defer mu.Unlock()
			switch e, ok := errors.AsType[*gate.Error](err); {
			case err == nil:
				done[key] = true
			case ok && (e.Kind == gate.ErrFull || e.Kind == gate.ErrConflict):
				refused++
			default:
				t.Errorf("%s: %v", key, err)
			}
		}
	)
	for i := range creates {
		g, key := tree(), fmt.Sprintf("b/c%d", i)
		writers = append(writers, func() { _, err := g.Create(ctx, key, []byte("created"), false); outcome(key, err) })
	}
	for i := range moves {
		g, from, to := tree(), fmt.Sprintf("a/m%d", i), fmt.Sprintf("b/m%d", i)
		writers = append(writers, func() { outcome(to, g.Move(ctx, from, to)) })
	}
	race(writers...)

	present := map[string]bool{}
	for _, key := range keys(t, setup) {
		present[key] = true
	}
	inB := 0
	for key := range present {
		if strings.HasPrefix(key, "b/") {
			inB++
		}
	}
	if inB > limit {
		t.Errorf("mount b holds %d files, over its limit of %d", inB, limit)
	}
	if len(done) != limit-2 || refused != creates+moves-len(done) {
		t.Errorf("%d writes acknowledged and %d refused of %d, want %d acknowledged (the places left), the rest refused",
			len(done), refused, creates+moves, limit-2)
	}
	for key := range done {
		if !present[key] {
			t.Errorf("%s was acknowledged but is not there", key)
		}
	}
	for i := range moves {
		from, to := fmt.Sprintf("a/m%d", i), fmt.Sprintf("b/m%d", i)
		if present[from] == present[to] {
			t.Errorf("moved file %d: at %s %v, at %s %v; want exactly one", i, from, present[from], to, present[to])
		}
		if present[to] != done[to] {
			t.Errorf("%s is there %v, acknowledged %v", to, present[to], done[to])
		}
	}
	for i := range creates {
		if key := fmt.Sprintf("b/c%d", i); present[key] != done[key] {
			t.Errorf("%s is there %v, acknowledged %v", key, present[key], done[key])
		}
	}
}

// Edits of a file racing its delete, each through a Tree of its own: the
// delete is acknowledged, every edit is either acknowledged (it landed
// before the delete) or refused as not found, and no edit brings the file
// back.
func TestEditsRaceADelete(t *testing.T) {
	const edits = 16
	ctx := t.Context()
	store := mem.New(nil)
	tree := func() *gate.Tree {
		g, err := gate.New(store, gate.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	setup := tree()
	if _, err := setup.Create(ctx, "f", []byte("x"), false); err != nil {
		t.Fatal(err)
	}
	var (
		mu               sync.Mutex
		landed, notFound int
		removeErr        error
		writers          []func()
	)
	for range edits {
		g := tree()
		writers = append(writers, func() {
			_, err := g.Edit(ctx, "f", func(b []byte) ([]byte, error) { return append(b, 'y'), nil })
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				landed++
			case errors.Is(err, gate.ErrNotFound):
				notFound++
			default:
				t.Errorf("Edit: %v", err)
			}
		})
	}
	g := tree()
	writers = append(writers, func() { removeErr = g.Remove(ctx, "f", blob.Cond{}, false) })
	race(writers...)
	if removeErr != nil {
		t.Errorf("Remove: %v", removeErr)
	}
	if landed+notFound != edits {
		t.Errorf("%d edits acknowledged, %d refused as not found, of %d", landed, notFound, edits)
	}
	if got := keys(t, setup); len(got) != 0 {
		t.Errorf("files %v after the delete, want none", got)
	}
}
