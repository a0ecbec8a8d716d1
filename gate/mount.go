package gate

import "github.com/cloudmem/cloudmem/blob"

// Mount tables. A store that implements blob.Traits.Mounts (package mount)
// places stores under top-level names: /memories/team/a.md is the file a.md
// of the store mounted at team. Every write applies the rules of the
// "Mounts" section of docs/spec.md first, before its own checks:
//
//   - a mount point cannot be deleted or moved, is a directory for a
//     create, an edit and a move's destination, and a write at the top
//     level outside every mount point is refused;
//   - a write under a read-only mount is refused while the others stay
//     writable, and a move across two mounts is refused when either is
//     read-only (otherwise blob.Rename copies, then deletes);
//   - the file limit counts the files of the key's own mount (countPrefix).
//
// Over a store that is not a mount table none of this applies and nothing
// is checked.

// op is the kind of a write, as the mount rules tell them apart.
type op int

const (
	opCreate op = iota // Create, Replace: a mount point exists
	opEdit             // Edit, and Remove of one file: a mount point is no file
	opDelete           // Remove of a file or a directory
)

// checkMount applies the mount rules to a write of kind o at key. The root
// is left to the operation's own check.
func (g *Tree) checkMount(o op, key string) error {
	mounts := blob.Mounts(g.store)
	if mounts == nil || key == "" {
		return nil
	}
	m, found := blob.MountOf(mounts, key)
	switch {
	case !found:
		return refuse(ErrNotMounted, key)
	case key == m.Name && o == opDelete:
		return refuse(ErrMountPoint, key)
	case key == m.Name && o == opCreate:
		return refuse(ErrExists, key)
	case key == m.Name:
		return refuse(ErrNotFile, key)
	case m.ReadOnly:
		return refuse(ErrReadOnly, "")
	}
	return nil
}

// checkMountedMove is checkMount for a move of oldKey to newKey: a
// read-only mount it crosses is the refusal's Key.
func (g *Tree) checkMountedMove(oldKey, newKey string) error {
	mounts := blob.Mounts(g.store)
	if mounts == nil || oldKey == "" {
		return nil
	}
	from, found := blob.MountOf(mounts, oldKey)
	switch {
	case !found:
		return refuse(ErrNotMounted, oldKey)
	case oldKey == from.Name:
		return refuse(ErrMountPoint, oldKey)
	case newKey == "":
		return nil // the root exists: the move's own check
	}
	to, found := blob.MountOf(mounts, newKey)
	switch {
	case !found:
		return refuse(ErrNotMounted, newKey)
	case newKey == to.Name:
		return refuse(ErrExists, newKey)
	case from.Name == to.Name && from.ReadOnly:
		return refuse(ErrReadOnly, "")
	case from.ReadOnly:
		return refuse(ErrReadOnly, from.Name)
	case to.ReadOnly:
		return refuse(ErrReadOnly, to.Name)
	}
	return nil
}

// countPrefix is the List prefix whose files the file limit counts for a
// file at key: its mount's on a mount table, otherwise the whole store.
func (g *Tree) countPrefix(key string) string {
	if m, ok := blob.MountOf(blob.Mounts(g.store), key); ok {
		return m.Name + "/"
	}
	return ""
}
