package mount_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/mount"
)

// A one-mount table hands each capability on to the mounted store, under
// the mount's name, and reports the table's Traits.
func TestForwarding(t *testing.T) {
	blobtest.Forwarding(t, func(*testing.T) blob.Store { return mem.New(nil) },
		func(t *testing.T, s blob.Store) blob.Store {
			tb, err := mount.New([]mount.Mount{{Name: "team", Store: s}})
			if err != nil {
				t.Fatal(err)
			}
			return tb
		},
		blobtest.ForwardingOptions{Key: "team/k", Traits: func(in blob.Traits) blob.Traits {
			return blob.Traits{KeyBudget: len("team/") + in.KeyBudget, HidesUnderObjects: true, ExclusiveNames: true, DeletesMayRepeat: true,
				Mounts: []blob.MountPoint{{Name: "team", KeyBudget: in.KeyBudget, Limits: in.Limits, Policy: in.Policy}}}
		}})
}
