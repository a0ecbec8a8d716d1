// Package mount composes several stores into one tree: a mount table places
// each store under a top-level name, so that one /memories holds, say, a
// team's shared knowledge at /memories/team (read-only) and a user's own
// notes at /memories/me.
//
// # Keys
//
// The table is a blob.Store whose key "team/notes/a.md" is the key
// "notes/a.md" of the store mounted at "team". Each mounted store keeps its
// own backend, prefix, encryption, history and read-only flag: it is an
// ordinary store, opened on its own (for example from its own URL with
// package storeurl), and the table only routes calls to it. A key never
// leaves its mount: the part after the mount's name is handed to that
// mount's store alone, keys are checked with blob.CheckKey first (no "..",
// no empty segment), and the table has no bookkeeping of its own, so the
// reserved bookkeeping keys of a mount (blob.IsReserved) are reachable only
// through that mount, and the memory handler refuses them at every depth.
//
// The name of a mount, alone, is its mount point: a directory that always
// exists, even when the mount is empty, and is never an object. A Get or
// Stat of a mount point, or of a key outside every mount, finds nothing (an
// error for which errors.Is(err, blob.ErrNotExist) is true), and a List of a
// prefix outside every mount yields nothing; a write there fails with
// ErrMountPoint or ErrNotMounted and reaches no store.
//
// # Capabilities
//
// The table implements blob.Traits.Mounts, which the memory handler consults to
// list the mount points at the root, to count files per mount, and to
// refuse writes per mount (see the "Mounts" section of docs/spec.md). It
// forwards blob.Tree and blob.Copier within one mount to that mount's
// store, blob.Tree likewise, and blob.BatchDeleter to each mount
// the keys lie in (so a directory delete
// or move inside a mount on S3 stays a few batch requests); a rename across
// two mounts answers
// errors.ErrUnsupported, so that blob.Rename copies each object into the
// other mount with Put(IfAbsent) and then deletes the sources, with the
// guarantee blob.Rename documents: every object is at its old key, its new
// key or both, never neither. A rename or tree delete that would write a
// read-only mount fails with blob.ErrReadOnly before any storage call.
// Traits.ReadOnly is true when every mount is read-only,
// Traits.HidesUnderObjects when any mount's is;
// Close closes every mounted store.
//
// Wrap each mounted store (prefix, encryption, history), not the table: a
// wrapper over the table that does not forward blob.Traits.Mounts (only Counter
// and blob.ReadOnly do) hides the mount points from the handler, which then
// treats the table as one plain store.
//
// # Storage calls
//
// Each call reaches exactly one mounted store and makes the same call
// there, except: a List whose prefix spans several mounts (the empty prefix,
// for the root of /memories) makes one List on each of them, in name
// order; a Get or Stat of a mount point, and any read outside every mount,
// is answered by the table itself, with no storage call; and a write there
// is refused with none.
package mount

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

// Errors of the table. Test for them with errors.Is.
var (
	// ErrNotMounted means a write named a key outside every mount point
	// (its first segment is no mount's name). Nothing was written.
	ErrNotMounted = errors.New("mount: key lies outside every mount point")
	// ErrMountPoint means a write, delete or rename named a mount point
	// itself, which always exists as a directory and is never an object.
	// Nothing was written.
	ErrMountPoint = errors.New("mount: a mount point cannot be written, deleted or renamed")
	// ErrInvalidTable means New was given a table it cannot build: no
	// mount, a bad or repeated name, or a nil store. The error is a
	// *TableError, which says why.
	ErrInvalidTable = errors.New("mount: invalid mount table")
)

// TableError is the error of New and CheckName for a table they cannot
// build: errors.Is(err, ErrInvalidTable) is true, and Reason says why
// without the package's prefix, for a program that words the error itself
// (the CLI's --mount).
type TableError struct {
	Reason string // "no mount", `mount name "x" is used twice`, ...
}

func (e *TableError) Error() string { return ErrInvalidTable.Error() + ": " + e.Reason }

// Is reports whether target is ErrInvalidTable.
func (e *TableError) Is(target error) bool { return target == ErrInvalidTable }

// invalid returns a *TableError with the reason format and args give.
func invalid(format string, args ...any) error {
	return &TableError{Reason: fmt.Sprintf(format, args...)}
}

// MaxNameBytes is the longest mount name, in bytes: one path segment.
const MaxNameBytes = 255

// Mount places one store in the table.
type Mount struct {
	// Name is the top-level directory the store appears under: one path
	// segment (no '/'), valid as a blob key, not hidden (no leading '.',
	// so never a reserved name, see blob.ReservedName), not
	// "node_modules", with no
	// '\' or '%' (which no memory path may carry), at most MaxNameBytes.
	Name string
	// Store is the mounted store. The table takes it over: Close closes it.
	Store blob.Store
	// ReadOnly refuses every write to this mount, whatever Store allows.
	// A Store for which blob.IsReadOnly is true is read-only anyway.
	ReadOnly bool
}

// CheckName returns nil when name is a valid mount name (see Mount.Name),
// and otherwise a *TableError (wrapping ErrInvalidTable) that says why.
func CheckName(name string) error {
	bad := func(why string) error { return invalid("mount name %q %s", name, why) }
	switch {
	case name == "":
		return invalid("empty mount name")
	case len(name) > MaxNameBytes:
		return bad(fmt.Sprintf("is over %d bytes", MaxNameBytes))
	case strings.Contains(name, "/"):
		return bad("has a '/': a mount name is one path segment")
	case blob.CheckKey(name) != nil:
		return bad("is not a valid key segment")
	case strings.HasPrefix(name, "."):
		return bad("starts with '.', which listings hide")
	case name == "node_modules":
		return bad("is hidden from listings")
	case strings.ContainsAny(name, `\%`):
		return bad(`has a '\' or '%', which no memory path may carry`)
	}
	return nil
}

// New returns a store that places each mount's store under its name. It
// returns a *TableError (wrapping ErrInvalidTable) when mounts is empty, a name is
// invalid (CheckName) or repeated, or a store is nil. A mount with ReadOnly
// set is wrapped with blob.ReadOnly, so that no write reaches it.
//
// The returned store implements blob.Traits.Mounts, blob.Tree,
// blob.Tree, blob.BatchDeleter, blob.Copier,
// blob.TraitsReporter and io.Closer, and is safe for
// concurrent use when every mounted store is. The table itself is fixed:
// mounts are neither added nor removed after New.
func New(mounts []Mount) (blob.Store, error) {
	if len(mounts) == 0 {
		return nil, invalid("no mount")
	}
	t := &table{byName: make(map[string]*mounted, len(mounts))}
	for _, m := range mounts {
		if err := CheckName(m.Name); err != nil {
			return nil, err
		}
		if m.Store == nil {
			return nil, invalid("mount %q has a nil store", m.Name)
		}
		if t.byName[m.Name] != nil {
			return nil, invalid("mount name %q is used twice", m.Name)
		}
		s, readOnly := m.Store, m.ReadOnly || blob.IsReadOnly(m.Store)
		if readOnly && !blob.IsReadOnly(s) {
			s = blob.ReadOnly(s)
		}
		mt := &mounted{name: m.Name, dir: m.Name + "/", store: s, readOnly: readOnly, keyBudget: blob.KeyBytes(s)}
		t.byName[m.Name] = mt
		t.mounts = append(t.mounts, mt)
	}
	// Keys of a mount all start with its dir, and no dir is a prefix of
	// another, so listing the mounts in byte order of their dirs lists the
	// keys in byte order ("a.b/" before "a/", although "a" < "a.b").
	slices.SortFunc(t.mounts, func(a, b *mounted) int { return strings.Compare(a.dir, b.dir) })
	for _, m := range t.mounts {
		mt := blob.TraitsOf(m.store)
		t.points = append(t.points, blob.MountPoint{Name: m.name, ReadOnly: m.readOnly, KeyBudget: m.keyBudget, Limits: mt.Limits, Policy: mt.Policy, Expires: mt.Expires})
		t.keyBudget = max(t.keyBudget, min(len(m.dir)+m.keyBudget, blob.MaxKeyLen))
	}
	slices.SortFunc(t.points, func(a, b blob.MountPoint) int { return strings.Compare(a.Name, b.Name) })
	return t, nil
}
