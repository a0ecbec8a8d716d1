package crypt_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
)

// hider is a store whose listing, it says, hides keys under objects.
type hider struct{ blob.Store }

func (hider) ListHidesUnderObjects() bool { return true }

// The encrypting store passes blob.ListHider on: keys are the same in both
// stores, so the handler must take the care the inner store needs.
func TestListHiderForwarded(t *testing.T) {
	cfg := newConfig(t, crypt.GenerateIdentity)
	for _, tt := range []struct {
		inner blob.Store
		want  bool
	}{{hider{mem.New(nil)}, true}, {mem.New(nil), false}} {
		s, err := crypt.Wrap(tt.inner, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := blob.ListHidesUnderObjects(s); got != tt.want {
			t.Errorf("over %T: ListHidesUnderObjects = %v, want %v", tt.inner, got, tt.want)
		}
	}
}
