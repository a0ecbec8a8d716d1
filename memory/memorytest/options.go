package memorytest

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// FullStoreCase is the Name (as Cases returns it) of the one golden case
// that fills a store to memory.DefaultMaxFiles: 2,000 Puts to set it up and
// 4,000 Gets to compare the store before and after, on top of its
// command. Every other file-limit case sets a small MaxFiles. A run over a
// wrapper whose backend's own run (the same server, plain) already passes
// this case may skip it: what the wrapper changes about the file limit
// (its own keys count in no limit; the listing it filters) the small
// cases prove through it too.
const FullStoreCase = "create/full at the default limit"

// Options adjusts RunWith for a run that repeats, over a wrapper, what
// another run proves.
type Options struct {
	// Skip maps a case's Name (as Cases returns it, FullStoreCase for
	// example) to the reason the run leaves it out, which the subtest
	// prints with t.Skip. A name that is no case, or a missing reason,
	// fails the run before any case runs.
	Skip map[string]string

	// Parallel runs the cases (and their groups) as parallel subtests,
	// as many at once as go test's -parallel allows. The cases share
	// nothing but newStore, so it is safe when newStore's stores share
	// nothing either (each its own bucket, container or prefix) and
	// newStore may be called concurrently; it pays when the store's calls
	// wait on a server.
	Parallel bool
}

// RunWith is Run with options: every golden case not in opts.Skip as its
// own subtest (grouped by command), each on a fresh store from newStore,
// which must return an empty store and arrange its cleanup with
// t.Cleanup.
func RunWith(t *testing.T, newStore func(t *testing.T) blob.Store, opts Options) {
	t.Helper()
	if bad := checkSkips(Cases(), opts.Skip); len(bad) > 0 {
		for _, msg := range bad {
			t.Error(msg)
		}
		t.FailNow()
	}
	for _, g := range groups {
		cases := g.sectioned()
		seen := map[string]bool{}
		for _, c := range cases {
			if seen[c.Name] {
				t.Fatalf("memorytest: duplicate case name %s/%s", g.name, c.Name)
			}
			seen[c.Name] = true
		}
		t.Run(g.name, func(t *testing.T) {
			if opts.Parallel {
				t.Parallel()
			}
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					if opts.Parallel {
						t.Parallel()
					}
					if reason, ok := opts.Skip[g.name+"/"+c.Name]; ok {
						t.Skip(reason)
					}
					runCase(t, newStore, c, nil)
				})
			}
		})
	}
}

// checkSkips returns what is wrong with skip: each name that is no case of
// cases, and each name given without a reason, one message each, in name
// order.
func checkSkips(cases []Case, skip map[string]string) []string {
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(skip)) {
		if !slices.ContainsFunc(cases, func(c Case) bool { return c.Name == name }) {
			bad = append(bad, fmt.Sprintf("memorytest.Options.Skip names %q, which is no case", name))
		}
		if skip[name] == "" {
			bad = append(bad, fmt.Sprintf("memorytest.Options.Skip[%q] gives no reason", name))
		}
	}
	return bad
}
