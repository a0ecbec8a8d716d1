package blob

import "slices"

// Traits is what a store says about itself without a storage call: what the
// memory tree above it must know to apply its rules. A store reports them
// by implementing TraitsReporter; a wrapper reports those of the store it
// wraps, changed only where it changes them (Prefix shortens the keys and
// hides the mounts, ReadOnly refuses writes). TraitsOf gives the Traits of
// any store.
type Traits struct {
	// ReadOnly: the store refuses every write. The memory handler refuses
	// writing commands up front.
	ReadOnly bool
	// KeyBudget is the longest key the store accepts, in bytes, at most
	// MaxKeyLen: less when it adds bytes of its own to every key (a prefix
	// and its '/'). A longer key is refused with ErrInvalidKey before any
	// call reaches storage; the memory handler refuses such a path as too
	// long. A store reporting Traits sets it (MaxKeyLen when it adds none).
	KeyBudget int
	// HidesUnderObjects: List may leave out keys that lie under a key that
	// exists as an object. MinIO does: it keeps the object "a/b" in a
	// directory a/b of its file system and does not descend into an
	// object's directory when it lists, while Get and Stat still find
	// "a/b/c". On such a store a create cannot see by listing a file
	// another writer just created beneath its own, so the memory handler
	// looks by Stat instead. It may turn from false to true once the store
	// has learnt what its server is (an S3 store, from its first
	// response), never back.
	HidesUnderObjects bool
	// ExclusiveNames: the store itself keeps a name from being both an
	// object and a prefix of other keys: a Put of "a/b" while "a" exists,
	// or of "a" while "a/b" does, fails with ErrPrecondition and changes
	// nothing, however the writes race (a file system does; Redis's write
	// scripts do). The memory handler then makes no look of its own after
	// a create.
	ExclusiveNames bool
	// DeletesMayRepeat: a Delete (without IfVersion) of a key that two
	// callers delete at the same moment may succeed for both, as S3's
	// does (it reads the key first, then sends a DELETE that succeeds on a
	// missing key). The memory handler then never takes a file it deleted
	// off the file count (the count stays too high until a recount),
	// since a second caller's success is no file fewer.
	DeletesMayRepeat bool
	// RecordsWrites: every write the store accepts is kept in a record that
	// people read (history's versions and audit log), even one withdrawn a
	// moment later. The memory handler then checks that a create's name is
	// free before it writes, so that a create it refuses leaves no record.
	RecordsWrites bool
	// Encrypted: the store encrypts what it writes (package crypt), so what
	// is read through it must not reach a local disk in plain text (a
	// search index file, for one).
	Encrypted bool
	// Mounts are the mount points of a mount table (package mount), in
	// byte order of their names, or nil for any other store. Such a store
	// finds nothing outside its mount points and refuses to write there,
	// and refuses to write, delete or rename a mount point itself.
	Mounts []MountPoint
	// Limits are the memory tree's limits set for this store (by its URL's
	// max_files, max_file_bytes and view_limit); zero fields leave the
	// memory handler's own.
	Limits Limits
	// Policy is the memory tree's write policy set for this store (by its
	// URL's secrets= and policy=: a *policy.Policy of package policy), or
	// nil for none. blob only carries it (WithPolicy); the memory handler
	// applies it to every write.
	Policy any
	// Expires: objects of the store expire (WithExpiry): the store hides
	// them, so the number of memory files in it can fall without a write.
	// The memory handler then recounts a full store's files before it
	// refuses a create.
	Expires bool
}

// Limits are limits of the memory tree that a store carries (see
// WithLimits). A zero field sets nothing.
type Limits struct {
	MaxFiles     int   // files in the store (memory.Options.MaxFiles); negative: no limit
	MaxFileBytes int64 // bytes in one file (memory.Options.MaxFileBytes)
	ViewLimit    int   // code points a view shows (memory.Options.ViewLimit); negative: no truncation
}

// TraitsReporter is implemented by stores that report Traits. A store that
// does not has the zero Traits with a KeyBudget of MaxKeyLen.
type TraitsReporter interface {
	Traits() Traits
}

// TraitsOf returns the Traits s reports, with KeyBudget kept within 0 and
// MaxKeyLen. The caller may modify the result (Mounts is a copy).
func TraitsOf(s Store) Traits {
	r, ok := s.(TraitsReporter)
	if !ok {
		return Traits{KeyBudget: MaxKeyLen}
	}
	t := r.Traits()
	t.KeyBudget = min(max(t.KeyBudget, 0), MaxKeyLen)
	t.Mounts = slices.Clone(t.Mounts)
	return t
}

// IsReadOnly reports whether s says it refuses writes (Traits.ReadOnly).
func IsReadOnly(s Store) bool { return TraitsOf(s).ReadOnly }

// KeyBytes returns the longest key s accepts (Traits.KeyBudget).
func KeyBytes(s Store) int { return TraitsOf(s).KeyBudget }

// ListHidesUnderObjects reports whether s says that its List may leave out
// keys under a key that exists as an object (Traits.HidesUnderObjects).
func ListHidesUnderObjects(s Store) bool { return TraitsOf(s).HidesUnderObjects }

// Mounts returns the mount points of s (Traits.Mounts), or nil when s is
// not a mount table.
func Mounts(s Store) []MountPoint { return TraitsOf(s).Mounts }

// WithLimits returns s carrying the limits l in its Traits (those l sets
// replace the ones s carries). It changes nothing else: every call and
// capability of s is s's.
func WithLimits(s Store, l Limits) Store {
	if l == (Limits{}) {
		return s
	}
	return &limitsStore{Forward: Forward{Inner: s}, limits: l}
}

// limitsStore is WithLimits's store.
type limitsStore struct {
	Forward
	limits Limits
}

func (s *limitsStore) Traits() Traits {
	t := TraitsOf(s.Inner)
	if s.limits.MaxFiles != 0 {
		t.Limits.MaxFiles = s.limits.MaxFiles
	}
	if s.limits.MaxFileBytes != 0 {
		t.Limits.MaxFileBytes = s.limits.MaxFileBytes
	}
	if s.limits.ViewLimit != 0 {
		t.Limits.ViewLimit = s.limits.ViewLimit
	}
	return t
}

// WithPolicy returns s carrying the write policy p in its Traits (a nil p
// returns s). It changes nothing else: every call and capability of s is
// s's.
func WithPolicy(s Store, p any) Store {
	if p == nil {
		return s
	}
	return &policyStore{Forward: Forward{Inner: s}, policy: p}
}

// policyStore is WithPolicy's store.
type policyStore struct {
	Forward
	policy any
}

func (s *policyStore) Traits() Traits {
	t := TraitsOf(s.Inner)
	t.Policy = s.policy
	return t
}

// The Traits of this package's wrappers.
var (
	_ TraitsReporter = (*prefixStore)(nil)
	_ TraitsReporter = readOnlyStore{}
	_ TraitsReporter = (*Counter)(nil)
	_ TraitsReporter = (*timeoutStore)(nil)
	_ TraitsReporter = (*plainStore)(nil)
)

// Traits are the inner store's, with the prefix and its '/' taken from the
// key budget; a prefixed store lies in one mount, so it has no mounts.
func (p *prefixStore) Traits() Traits {
	t := TraitsOf(p.inner)
	t.KeyBudget -= len(p.dir)
	t.Mounts = nil
	return t
}

// Traits are the inner store's, read-only, with every mount read-only.
func (r readOnlyStore) Traits() Traits {
	t := TraitsOf(r.inner)
	t.ReadOnly = true
	for i := range t.Mounts {
		t.Mounts[i].ReadOnly = true
	}
	return t
}

// Traits are the inner store's.
func (c *Counter) Traits() Traits { return TraitsOf(c.inner) }

// Traits are the inner store's.
func (t *timeoutStore) Traits() Traits { return TraitsOf(t.inner) }

// Traits are the inner store's.
func (p *plainStore) Traits() Traits { return TraitsOf(p.inner) }
