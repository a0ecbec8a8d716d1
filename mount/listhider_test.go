package mount_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mount"
)

// hider is a store whose listing, it says, hides keys under objects.
type hider struct{ blob.Store }

func (hider) ListHidesUnderObjects() bool { return true }

// A mount table's listing hides keys under objects when any mount's does:
// the handler then takes that care in every mount.
func TestListHiderAnyMount(t *testing.T) {
	for _, tt := range []struct {
		name string
		me   blob.Store
		want bool
	}{{"one mount hides", hider{mem.New(nil)}, true}, {"none hides", mem.New(nil), false}} {
		table, err := mount.New([]mount.Mount{{Name: "team", Store: mem.New(nil)}, {Name: "me", Store: tt.me}})
		if err != nil {
			t.Fatal(err)
		}
		if got := blob.ListHidesUnderObjects(table); got != tt.want {
			t.Errorf("%s: ListHidesUnderObjects = %v, want %v", tt.name, got, tt.want)
		}
	}
}
