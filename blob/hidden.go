package blob

// ListHider is implemented by stores whose List can leave out keys that lie
// under a key existing as an object. MinIO does: it keeps the object "a/b"
// in a directory a/b of its file system and does not descend into an
// object's directory when it lists, so while "a/b" exists a listing of
// "a/b/" (or of "a/") omits "a/b/c", which Get and Stat still find. Such a
// store still answers Get, Stat, Put and Delete of every key exactly.
//
// The memory handler consults it (through ListHidesUnderObjects): on such a
// store a create cannot see, by listing, a file another writer just created
// beneath its own new file, so it runs a protocol that looks by Stat instead
// (see the memory package's call table). Wrappers that keep the key space as
// it is forward it: Prefix, ReadOnly, Counter, WithTimeout and
// RefuseEncrypted do.
type ListHider interface {
	// ListHidesUnderObjects reports whether List may leave out keys under
	// a key that exists as an object. It may turn from false to true once
	// the store has learnt what its server is (an S3 store, from its first
	// response), never back; it makes no storage call.
	ListHidesUnderObjects() bool
}

// ListHidesUnderObjects reports whether s says that its List may leave out
// keys under a key that exists as an object (see ListHider).
func ListHidesUnderObjects(s Store) bool {
	h, ok := s.(ListHider)
	return ok && h.ListHidesUnderObjects()
}

var (
	_ ListHider = (*prefixStore)(nil)
	_ ListHider = readOnlyStore{}
	_ ListHider = (*Counter)(nil)
	_ ListHider = (*timeoutStore)(nil)
	_ ListHider = (*plainStore)(nil)
)

// ListHidesUnderObjects is the inner store's.
func (p *prefixStore) ListHidesUnderObjects() bool { return ListHidesUnderObjects(p.inner) }

// ListHidesUnderObjects is the inner store's.
func (r readOnlyStore) ListHidesUnderObjects() bool { return ListHidesUnderObjects(r.inner) }

// ListHidesUnderObjects is the inner store's.
func (c *Counter) ListHidesUnderObjects() bool { return ListHidesUnderObjects(c.inner) }

// ListHidesUnderObjects is the inner store's.
func (t *timeoutStore) ListHidesUnderObjects() bool { return ListHidesUnderObjects(t.inner) }

// ListHidesUnderObjects is the inner store's.
func (p *plainStore) ListHidesUnderObjects() bool { return ListHidesUnderObjects(p.inner) }
