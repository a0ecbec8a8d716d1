package blob

import "strings"

// MountPoint is one entry of a mount table: a store placed under a
// top-level name (see Traits.Mounts).
type MountPoint struct {
	// Name is a single key segment. Every key of the mounted store k is
	// the key Name+"/"+k of the table; the key Name itself is the mount
	// point, a directory that always exists and is never an object.
	Name string
	// ReadOnly reports whether the mounted store refuses writes.
	ReadOnly bool
	// KeyBudget is the longest key the mounted store accepts (KeyBytes):
	// a key of the table under Name is at most len(Name)+1+KeyBudget bytes.
	KeyBudget int
	// Limits are the mounted store's (Traits.Limits): the memory tree's
	// limits within this mount.
	Limits Limits
	// Policy is the mounted store's write policy (Traits.Policy).
	Policy any
	// Expires: objects of the mounted store expire (Traits.Expires).
	Expires bool
}

// MountOf returns the mount point among mounts that holds key or is key: the
// one named by key's first segment. It returns false when there is none.
// The empty key (the root) lies in no mount.
func MountOf(mounts []MountPoint, key string) (MountPoint, bool) {
	name, _, _ := strings.Cut(key, "/")
	for _, m := range mounts {
		if m.Name == name && name != "" {
			return m, true
		}
	}
	return MountPoint{}, false
}
