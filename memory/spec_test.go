package memory_test

import (
	"context"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

// The SPEC suite over the in-memory store, through each wrapper a
// deployment may put in front of it, over a store without the optional
// capabilities (so that the handler's fallbacks run too), and over the
// local-directory store.

type backend struct {
	name     string
	newStore func(t *testing.T) blob.Store
}

// coreOnly hides every method but the five of blob.Store, so Rename and
// DeleteTree take their portable fallbacks.
type coreOnly struct{ blob.Store }

// backends are the stores the suites run over, one per behaviour the handler
// branches on: the plain store, a prefix (keys shorter than the store's),
// a store without any capability (every fallback), and the file store
// (names kept exclusive by the store). A wrapper that changes no behaviour
// (blob.NewCounter) runs blobtest's suite, not these.
func backends() []backend {
	return []backend{
		{"mem", func(*testing.T) blob.Store { return mem.New(nil) }},
		{"prefix", newPrefixed},
		{"core-only", func(*testing.T) blob.Store { return coreOnly{mem.New(nil)} }},
		{"file", newFile},
	}
}

// newFile returns a local-directory store in a fresh temporary directory.
func newFile(t *testing.T) blob.Store {
	t.Helper()
	s, err := file.Open(t.Context(), t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatalf("file.Open: %v", err)
	}
	return s
}

// newPrefixed returns the store of tenant "a" in a store shared with
// neighbours whose keys share its prefix as a string, and checks at the end
// that the handler never touched them.
func newPrefixed(t *testing.T) blob.Store {
	t.Helper()
	ctx := context.Background()
	inner := mem.New(nil)
	neighbours := map[string]string{"tenant/a.md": "sibling file", "tenant/ab/x.md": "other tenant", "tenant/b/a.md": "tenant b", "a.md": "top"}
	for k, v := range neighbours {
		if _, err := inner.Put(ctx, k, []byte(v), blob.Cond{}); err != nil {
			t.Fatalf("Put %q: %v", k, err)
		}
	}
	t.Cleanup(func() {
		for k, v := range neighbours {
			data, _, err := inner.Get(ctx, k, blob.MaxObjectBytes)
			if err != nil || string(data) != v {
				t.Errorf("neighbour %q outside the prefix: got %q, %v; want %q unchanged", k, data, err, v)
			}
		}
	})
	s, err := blob.Prefix(inner, "tenant/a")
	if err != nil {
		t.Fatalf("blob.Prefix: %v", err)
	}
	return s
}

func TestSpec(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			memorytest.Run(t, b.newStore)
		})
	}
}

func TestSpecConcurrency(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			memorytest.RunConcurrency(t, b.newStore)
		})
	}
}
