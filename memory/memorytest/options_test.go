package memorytest

import (
	"flag"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

func TestFullStoreCaseExists(t *testing.T) {
	var found []Case
	for _, c := range Cases() {
		if c.Name == FullStoreCase {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d cases named %q, want 1", len(found), FullStoreCase)
	}
	if c := found[0]; c.Options.MaxFiles != 0 || len(c.Files) != 2000 {
		t.Errorf("%q has MaxFiles %d and %d files, want the default limit (0) and 2,000 files", c.Name, c.Options.MaxFiles, len(c.Files))
	}
}

func TestCheckSkips(t *testing.T) {
	got := checkSkips(Cases(), map[string]string{
		FullStoreCase:         "the plain run proves it",
		"create/no such case": "a typo",
		"rename/":             "",
	})
	want := []string{
		`memorytest.Options.Skip names "create/no such case", which is no case`,
		`memorytest.Options.Skip names "rename/", which is no case`,
		`memorytest.Options.Skip["rename/"] gives no reason`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkSkips =\n%q\nwant\n%q", got, want)
	}
	if got := checkSkips(Cases(), map[string]string{FullStoreCase: "the plain run proves it"}); got != nil {
		t.Errorf("checkSkips of a valid skip = %q, want none", got)
	}
}

// TestRunWithSkips runs every case but one skipped: the store is made once,
// for the one case that runs (which then skips, so that this test checks
// the selection alone, not the handler).
func TestRunWithSkips(t *testing.T) {
	const keep = "create/a file at the root"
	skip := map[string]string{}
	for _, c := range Cases() {
		if c.Name != keep {
			skip[c.Name] = "left out by TestRunWithSkips"
		}
	}
	if len(skip) != len(Cases())-1 {
		t.Fatalf("no case named %q", keep)
	}
	made := 0
	RunWith(t, func(t *testing.T) blob.Store {
		made++
		t.SkipNow()
		return nil
	}, Options{Skip: skip})
	if made != 1 {
		t.Errorf("the run made %d stores, want 1 (for %q alone)", made, keep)
	}
}

// TestRunWithParallel: with Parallel, every case passes on mem (under
// -race: nothing shared between cases races) and more than one store is
// in use at once when -parallel allows it.
func TestRunWithParallel(t *testing.T) {
	var live, most, made atomic.Int64
	t.Run("suite", func(t *testing.T) {
		RunWith(t, func(t *testing.T) blob.Store {
			made.Add(1)
			n := live.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			t.Cleanup(func() { live.Add(-1) })
			return mem.New(nil)
		}, Options{Parallel: true})
	})
	if made.Load() == 0 {
		t.Fatal("the run made no store")
	}
	if limit := flag.Lookup("test.parallel").Value.(flag.Getter).Get().(int); limit > 1 && most.Load() < 2 {
		t.Errorf("at most %d store in use at once with -parallel %d, want the cases to overlap", most.Load(), limit)
	}
}
