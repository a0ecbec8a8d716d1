package blob_test

import (
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// hider is a store that says its List hides keys under objects.
type hider struct{ blob.Store }

func (hider) ListHidesUnderObjects() bool { return true }

// Every wrapper that keeps the key space forwards ListHidesUnderObjects:
// true over a store that says so, false over one that does not.
func TestListHidesUnderObjectsForwarded(t *testing.T) {
	wrappers := []struct {
		name string
		wrap func(blob.Store) blob.Store
	}{
		{"prefix", func(s blob.Store) blob.Store {
			p, err := blob.Prefix(s, "tenant")
			if err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"read-only", blob.ReadOnly},
		{"counter", func(s blob.Store) blob.Store { return blob.NewCounter(s) }},
		{"timeout", func(s blob.Store) blob.Store { return blob.WithTimeout(s, time.Second) }},
		{"refuse encrypted", blob.RefuseEncrypted},
	}
	for _, w := range wrappers {
		if got := blob.ListHidesUnderObjects(w.wrap(hider{mem.New(nil)})); !got {
			t.Errorf("%s over a store whose listing hides keys: ListHidesUnderObjects = false", w.name)
		}
		if got := blob.ListHidesUnderObjects(w.wrap(mem.New(nil))); got {
			t.Errorf("%s over mem: ListHidesUnderObjects = true", w.name)
		}
	}
}
