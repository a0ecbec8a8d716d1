package gate_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
)

// stores returns the stores the race tests run on: the in-memory store,
// then the local directory.
func stores(t *testing.T) map[string]blob.Store {
	t.Helper()
	dir, err := file.Open(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]blob.Store{"mem": mem.New(nil), "file": dir}
}

// raceTrees starts n writers, each with its own Tree over store (as
// separate processes would have), releases them at once (race), and
// returns each one's error.
func raceTrees(t *testing.T, store blob.Store, opts gate.Options, n int, write func(g *gate.Tree, i int) error) []error {
	t.Helper()
	errs := make([]error, n)
	writers := make([]func(), n)
	for i := range n {
		g, err := gate.New(store, opts)
		if err != nil {
			t.Fatal(err)
		}
		writers[i] = func() { errs[i] = write(g, i) }
	}
	race(writers...)
	return errs
}

// Racing creates of one name: one lands, every other is refused as
// existing, and the file holds the content of the one acknowledged.
func TestRacingCreatesOfOneName(t *testing.T) {
	const n = 16
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			errs := raceTrees(t, store, gate.Options{}, n, func(g *gate.Tree, i int) error {
				_, err := g.Create(t.Context(), "a/b", fmt.Appendf(nil, "%d", i), false)
				return err
			})
			won, refused := -1, 0
			for i, err := range errs {
				switch {
				case err == nil && won < 0:
					won = i
				case err == nil:
					t.Errorf("writers %d and %d both created a/b", won, i)
				case errors.Is(err, gate.ErrExists):
					refused++
				default:
					t.Errorf("writer %d: %v", i, err)
				}
			}
			g, err := gate.New(store, gate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			data, _, err := g.Get(t.Context(), "a/b")
			if won < 0 || refused != n-1 || err != nil || string(data) != fmt.Sprint(won) {
				t.Errorf("acknowledged %d, refused %d of %d; a/b holds %q (%v)", won, refused, n, data, err)
			}
		})
	}
}

// Racing creates of distinct names at the file limit: exactly the free
// places are taken, every other create is refused as full, and the store
// holds exactly the files acknowledged.
func TestRacingCreatesAtTheFileLimit(t *testing.T) {
	const n, limit = 24, 10
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			opts := gate.Options{MaxFiles: limit}
			errs := raceTrees(t, store, opts, n, func(g *gate.Tree, i int) error {
				_, err := g.Create(t.Context(), fmt.Sprintf("f%02d", i), []byte("x"), false)
				return err
			})
			var acked []string
			full := 0
			for i, err := range errs {
				switch {
				case err == nil:
					acked = append(acked, fmt.Sprintf("f%02d", i))
				case errors.Is(err, gate.ErrFull):
					full++
				default:
					t.Errorf("writer %d: %v", i, err)
				}
			}
			g, err := gate.New(store, opts)
			if err != nil {
				t.Fatal(err)
			}
			present := keys(t, g)
			if len(acked) != limit || full != n-limit || fmt.Sprint(present) != fmt.Sprint(acked) {
				t.Errorf("acknowledged %v, refused as full %d of %d; present %v", acked, full, n, present)
			}
		})
	}
}
