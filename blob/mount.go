package blob

import (
	"slices"
	"strings"
)

// MountPoint is one entry of a mount table: a store placed under a
// top-level name (see Mounter).
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
}

// Mounter is implemented by stores that compose other stores under
// top-level names, as package mount does: the key "team/notes/a.md" is the
// key "notes/a.md" of the store mounted at "team". Such a store finds
// nothing outside its mount points and refuses to write there, and refuses
// to write, delete or rename a mount point itself.
//
// The memory handler consults it: the root of /memories lists every mount
// point as a directory (an empty one too), the file limit counts the files
// of one mount, a write under a read-only mount is refused while the other
// mounts stay writable, and a write at the top level outside every mount
// point is refused before any storage call.
//
// Counter and the store returned by ReadOnly forward Mounter (ReadOnly
// reports every mount read-only); Prefix does not, since a prefixed store's
// keys all lie in one mount.
type Mounter interface {
	// Mounts returns the mount points in byte order of their names, or
	// nil when the store places no store under a name (a wrapper whose
	// inner store is not a mount table). The caller may modify the slice.
	Mounts() []MountPoint
}

// Mounts returns the mount points of s (see Mounter), or nil when s is not a
// mount table.
func Mounts(s Store) []MountPoint {
	if m, ok := s.(Mounter); ok {
		return m.Mounts()
	}
	return nil
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

var (
	_ Mounter = (*Counter)(nil)
	_ Mounter = readOnlyStore{}
)

// Mounts forwards to the inner store, so that a handler over a Counter sees
// the mount table it counts.
func (c *Counter) Mounts() []MountPoint { return Mounts(c.inner) }

// Mounts forwards to the inner store, with every mount read-only.
func (r readOnlyStore) Mounts() []MountPoint {
	mounts := slices.Clone(Mounts(r.inner))
	for i := range mounts {
		mounts[i].ReadOnly = true
	}
	return mounts
}
