package memory_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// The bound the handler documents for a directory move or delete.
const moveBound = 16

var errInjected = errors.New("injected failure")

// gauge is a store without capabilities whose Put and Delete each take a
// little while, so that calls made at the same time overlap; it records the
// most calls in flight at once (of any method), can fail exactly the nth
// call of one method, and can run a hook after a Put succeeds.
type gauge struct {
	blob.Store
	failMethod string // "Put" or "Delete"; "" fails nothing
	failNth    int
	afterPut   func(key string) // may be nil

	mu       sync.Mutex
	calls    map[string]int
	inFlight int
	most     int
}

func (g *gauge) enter(method string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.calls == nil {
		g.calls = map[string]int{}
	}
	g.calls[method]++
	if method == g.failMethod && g.calls[method] == g.failNth {
		return fmt.Errorf("%s %d: %w", method, g.failNth, errInjected)
	}
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	return nil
}

func (g *gauge) leave() {
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
}

func (g *gauge) maxInFlight() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

func (g *gauge) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if err := g.enter("Get"); err != nil {
		return nil, blob.Info{}, err
	}
	defer g.leave()
	return g.Store.Get(ctx, key, limit)
}

func (g *gauge) Put(ctx context.Context, key string, data []byte, cond blob.Cond) (blob.Info, error) {
	if err := g.enter("Put"); err != nil {
		return blob.Info{}, err
	}
	time.Sleep(2 * time.Millisecond)
	info, err := g.Store.Put(ctx, key, data, cond)
	g.leave()
	if err == nil && g.afterPut != nil {
		g.afterPut(key)
	}
	return info, err
}

func (g *gauge) Delete(ctx context.Context, key string, cond blob.Cond) error {
	if err := g.enter("Delete"); err != nil {
		return err
	}
	defer g.leave()
	time.Sleep(2 * time.Millisecond)
	return g.Store.Delete(ctx, key, cond)
}

// dirFiles returns n files under dir, store key → content.
func dirFiles(dir string, n int) map[string]string {
	files := make(map[string]string, n)
	for i := range n {
		files[fmt.Sprintf("%s/f%02d.md", dir, i)] = fmt.Sprintf("file %d\n", i)
	}
	return files
}

// A 64-file directory rename by copy overlaps its calls, never more than
// the bound at once, and moves every file.
func TestRenameDirParallel(t *testing.T) {
	const n = 64
	inner := mem.New(nil)
	seedStore(t, inner, dirFiles("old", n))
	g := &gauge{Store: coreOnly{inner}}
	r := handler(t, g).Rename(t.Context(), "/memories/old", "/memories/new")
	if want := "Successfully renamed /memories/old to /memories/new"; r.Text != want {
		t.Fatalf("got %q, want %q", r.Text, want)
	}
	if got, want := contents(t, inner), dirFiles("new", n); !maps.Equal(got, want) {
		t.Errorf("store afterwards:\n got %v\nwant %v", got, want)
	}
	if most := g.maxInFlight(); most <= 1 || most > moveBound {
		t.Errorf("at most %d calls in flight at once, want 2 to %d", most, moveBound)
	}
}

// A directory delete that deletes file by file (reserved keys lie beneath,
// which it keeps) overlaps its Deletes, never more than the bound at once.
func TestDeleteDirParallel(t *testing.T) {
	const n = 64
	inner := mem.New(nil)
	seedStore(t, inner, dirFiles("d", n))
	seedStore(t, inner, map[string]string{"d/.cloudmem/lock": "x", "keep.md": "k"})
	g := &gauge{Store: coreOnly{inner}}
	if got, want := handler(t, g).Delete(t.Context(), "/memories/d").Text, "Successfully deleted /memories/d"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got, want := contents(t, inner), map[string]string{"d/.cloudmem/lock": "x", "keep.md": "k"}; !maps.Equal(got, want) {
		t.Errorf("store afterwards: %v, want %v", got, want)
	}
	if most := g.maxInFlight(); most <= 1 || most > moveBound {
		t.Errorf("at most %d Deletes in flight at once, want 2 to %d", most, moveBound)
	}
}

// One failed call in the middle of a parallel 40-file rename: a failed
// copy leaves the store as it was (every copy made is undone); a failed
// source delete leaves that one file at both paths and the rest moved.
// Either way no file is at neither path, and the rename sent again
// completes the move.
func TestRenameDirParallelFailure(t *testing.T) {
	const n = 40
	for _, method := range []string{"Put", "Delete"} {
		for _, nth := range []int{1, 17, n} {
			t.Run(fmt.Sprintf("%s %d fails", method, nth), func(t *testing.T) {
				inner := mem.New(nil)
				seedStore(t, inner, dirFiles("old", n))
				before := contents(t, inner)
				g := &gauge{Store: coreOnly{inner}, failMethod: method, failNth: nth}
				r := handler(t, g).Rename(t.Context(), "/memories/old", "/memories/new")
				if !errors.Is(r.Err, memory.ErrStorage) || !errors.Is(r.Err, errInjected) {
					t.Fatalf("the failed rename: %q (Err %v), want a storage failure", r.Text, r.Err)
				}
				got := contents(t, inner)
				if method == "Put" && !maps.Equal(got, before) {
					t.Fatalf("after a failed copy the store is not as before:\n got %v\nwant %v", got, before)
				}
				both := 0
				for i := range n {
					old, moved := fmt.Sprintf("old/f%02d.md", i), fmt.Sprintf("new/f%02d.md", i)
					switch {
					case got[old] == "" && got[moved] == "":
						t.Fatalf("file %d is at neither %q nor %q: %v", i, old, moved, got)
					case got[old] != "" && got[moved] != "":
						both++
					}
				}
				if method == "Delete" && (both != 1 || len(got) != n+1) {
					t.Fatalf("after a failed source delete: %d files at both paths and %d keys, want 1 and %d: %v", both, len(got), n+1, got)
				}
				r = handler(t, coreOnly{inner}).Rename(t.Context(), "/memories/old", "/memories/new")
				if want := "Successfully renamed /memories/old to /memories/new"; r.Text != want || r.IsError {
					t.Errorf("the retried rename: %q, want %q", r.Text, want)
				}
				if got, want := contents(t, inner), dirFiles("new", n); !maps.Equal(got, want) {
					t.Errorf("store after the retry:\n got %v\nwant %v", got, want)
				}
			})
		}
	}
}

// Edits that land on sources after they were copied, while other copies
// are still being made, are carried over to the new paths.
func TestRenameDirParallelCarriesEdits(t *testing.T) {
	const n = 40
	inner := mem.New(nil)
	seedStore(t, inner, dirFiles("old", n))
	edited := map[string]bool{"new/f03.md": true, "new/f20.md": true, "new/f39.md": true}
	var once sync.Map
	g := &gauge{Store: coreOnly{inner}}
	g.afterPut = func(key string) {
		if _, done := once.LoadOrStore(key, true); done || !edited[key] {
			return
		}
		src := "old/" + key[len("new/"):]
		if _, err := inner.Put(context.Background(), src, []byte("edited "+src), blob.Cond{}); err != nil {
			t.Error(err)
		}
	}
	r := handler(t, g).Rename(t.Context(), "/memories/old", "/memories/new")
	if want := "Successfully renamed /memories/old to /memories/new"; r.Text != want {
		t.Fatalf("got %q, want %q", r.Text, want)
	}
	want := dirFiles("new", n)
	for key := range edited {
		want[key] = "edited old/" + key[len("new/"):]
	}
	if got := contents(t, inner); !maps.Equal(got, want) {
		t.Errorf("store afterwards:\n got %v\nwant %v", got, want)
	}
}
