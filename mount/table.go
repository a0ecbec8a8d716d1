package mount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

// table is the store New returns. It is immutable after New.
type table struct {
	mounts []*mounted          // in byte order of dir
	byName map[string]*mounted // by name
	points []blob.MountPoint   // in byte order of name
	// keyBudget is the longest key some mount accepts, name included.
	keyBudget int
}

// mounted is one mount of a table.
type mounted struct {
	name      string
	dir       string // name + "/"
	store     blob.Store
	readOnly  bool
	keyBudget int // blob.KeyBytes(store)
}

var (
	_ blob.TraitsReporter = (*table)(nil)
	_ blob.Tree           = (*table)(nil)
	_ blob.Locker         = (*table)(nil)
	_ blob.BatchDeleter   = (*table)(nil)
	_ blob.Copier         = (*table)(nil)
	_ io.Closer           = (*table)(nil)
)

// route returns the mount holding key and the key inside it. It fails with
// blob.ErrInvalidKey for an invalid key, ErrNotMounted for a key outside
// every mount and ErrMountPoint for a mount's own name.
func (t *table) route(key string) (*mounted, string, error) {
	if err := blob.CheckKey(key); err != nil {
		return nil, "", err
	}
	name, rest, inside := strings.Cut(key, "/")
	m := t.byName[name]
	switch {
	case m == nil:
		return nil, "", fmt.Errorf("%q: %w", key, ErrNotMounted)
	case !inside:
		return nil, "", fmt.Errorf("%q: %w", key, ErrMountPoint)
	}
	return m, rest, nil
}

// readRoute is route for reads: a key outside every mount, or a mount
// point, is an object that does not exist.
func (t *table) readRoute(key string) (*mounted, string, error) {
	m, k, err := t.route(key)
	if errors.Is(err, ErrNotMounted) || errors.Is(err, ErrMountPoint) {
		return nil, "", fmt.Errorf("%w: %w", blob.ErrNotExist, err)
	}
	return m, k, err
}

// outer turns an Info of the mount's store into one of the table.
func (m *mounted) outer(info blob.Info) blob.Info {
	if info.Key != "" {
		info.Key = m.dir + info.Key
	}
	return info
}

func (t *table) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	m, k, err := t.readRoute(key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	data, info, err := m.store.Get(ctx, k, limit)
	if tl, ok := errors.AsType[*blob.TooLargeError](err); ok {
		// The caller's key, not the mounted store's.
		err = &blob.TooLargeError{Key: key, Size: tl.Size, Limit: tl.Limit}
	}
	return data, m.outer(info), err
}

func (t *table) Stat(ctx context.Context, key string) (blob.Info, error) {
	m, k, err := t.readRoute(key)
	if err != nil {
		return blob.Info{}, err
	}
	info, err := m.store.Stat(ctx, k)
	return m.outer(info), err
}

func (t *table) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	m, k, err := t.route(key)
	if err != nil {
		return blob.Info{}, err
	}
	info, err := m.store.Put(ctx, k, data, c)
	return m.outer(info), err
}

func (t *table) Delete(ctx context.Context, key string, c blob.Cond) error {
	m, k, err := t.route(key)
	if err != nil {
		return err
	}
	return m.store.Delete(ctx, k, c)
}

// List lists each mount whose keys can start with prefix, in byte order of
// the mounts' names followed by '/', which is byte order of the keys.
func (t *table) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		if err := blob.CheckPrefix(prefix); err != nil {
			yield(blob.Info{}, err)
			return
		}
		for _, m := range t.mounts {
			var inner string
			switch {
			case strings.HasPrefix(m.dir, prefix): // the whole mount
			case strings.HasPrefix(prefix, m.dir):
				inner = prefix[len(m.dir):]
			default:
				continue
			}
			for info, err := range m.store.List(ctx, inner) {
				if err != nil {
					yield(blob.Info{}, err)
					return
				}
				if !yield(m.outer(info), nil) {
					return
				}
			}
		}
	}
}

// Rename forwards to the mount's store when src and dst lie in one mount
// (errors.ErrUnsupported when that store has no atomic Rename). Across two mounts
// it answers errors.ErrUnsupported, so that blob.Rename copies and then
// deletes, unless either mount is read-only: then it fails with
// blob.ErrReadOnly and nothing is written.
func (t *table) Rename(ctx context.Context, src, dst string) error {
	from, srcKey, err := t.route(src)
	if err != nil {
		return err
	}
	to, dstKey, err := t.route(dst)
	if err != nil {
		return err
	}
	switch {
	case from.readOnly || to.readOnly:
		return fmt.Errorf("mount: rename %q to %q: %w", src, dst, blob.ErrReadOnly)
	case from != to:
		return fmt.Errorf("mount: rename across mounts %q and %q: %w", from.name, to.name, errors.ErrUnsupported)
	}
	r, ok := from.store.(blob.Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	return r.Rename(ctx, srcKey, dstKey)
}

// DeleteTree forwards to the mount's store (errors.ErrUnsupported when that
// store has no DeleteTree (blob.Tree)). A mount point itself cannot be deleted
// (ErrMountPoint).
func (t *table) DeleteTree(ctx context.Context, dir string) error {
	m, k, err := t.route(dir)
	if err != nil {
		return err
	}
	if m.readOnly {
		return fmt.Errorf("mount: delete tree %q: %w", dir, blob.ErrReadOnly)
	}
	d, ok := m.store.(blob.Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	return d.DeleteTree(ctx, k)
}

// Lock takes the lock of the mount's store on key (errors.ErrUnsupported
// when that store has no Locker), so that writers of one file under a mount
// take turns as they do on the store itself. A lock is not a write: a
// read-only mount has its store's locks too.
func (t *table) Lock(ctx context.Context, key string) (func(), error) {
	m, k, err := t.route(key)
	if err != nil {
		return nil, err
	}
	l, ok := m.store.(blob.Locker)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return l.Lock(ctx, k)
}

// writeGroups routes keys for a write to several of them: the mounts in
// order of first appearance, and for each the indexes into keys and the
// keys inside it. Any key outside every mount, a mount point or a key in a
// read-only mount fails the whole call before anything is written.
func (t *table) writeGroups(op string, keys []string) ([]*mounted, map[*mounted][]int, map[*mounted][]string, error) {
	var order []*mounted
	idx, inner := map[*mounted][]int{}, map[*mounted][]string{}
	for i, key := range keys {
		m, k, err := t.route(key)
		if err != nil {
			return nil, nil, nil, err
		}
		if m.readOnly {
			return nil, nil, nil, fmt.Errorf("mount: %s %q: %w", op, key, blob.ErrReadOnly)
		}
		if _, seen := idx[m]; !seen {
			order = append(order, m)
		}
		idx[m] = append(idx[m], i)
		inner[m] = append(inner[m], k)
	}
	return order, idx, inner, nil
}

// DeleteBatch deletes each object, unconditionally or at its version,
// with blob.DeleteBatch on each mount the objects lie in (its store's
// BatchDeleter, or its fallback), one mount after another, and returns the
// errors in the order of infos. When a mount's call fails as a whole, each
// of its objects gets that error. Nothing is deleted when a key lies
// outside every mount, is a mount point, or lies in a read-only mount.
func (t *table) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	order, idx, inner, err := t.writeGroups("delete", blob.Keys(infos))
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(infos))
	for _, m := range order {
		part := make([]blob.Info, len(idx[m]))
		for j, i := range idx[m] {
			part[j] = blob.Info{Key: inner[m][j], Version: infos[i].Version}
		}
		got, err := blob.DeleteBatch(ctx, m.store, part)
		for j, i := range idx[m] {
			if err != nil {
				errs[i] = fmt.Errorf("mount %q: %w", m.name, err)
			} else {
				errs[i] = got[j]
			}
		}
	}
	return errs, nil
}

// Copy forwards to the mount's store when src and dst lie in one writable
// mount (errors.ErrUnsupported when that store has no Copier). Otherwise
// (across two mounts, into a read-only mount, to a key outside every mount)
// it answers errors.ErrUnsupported, so that blob.Copy reads the source and
// writes the destination, and fails as those calls do: a missing source
// first, then the destination's refusal (blob.ErrReadOnly, ErrNotMounted).
func (t *table) Copy(ctx context.Context, src, dst, srcVersion string) (blob.Info, error) {
	from, srcKey, err1 := t.readRoute(src)
	to, dstKey, err2 := t.route(dst)
	if err := errors.Join(err1, err2); err != nil || to.readOnly || from != to {
		return blob.Info{}, fmt.Errorf("mount: copy %q to %q on the server: %w", src, dst, errors.ErrUnsupported)
	}
	c, ok := from.store.(blob.Copier)
	if !ok {
		return blob.Info{}, errors.ErrUnsupported
	}
	info, err := c.Copy(ctx, srcKey, dstKey, srcVersion)
	return to.outer(info), err
}

// Traits: the longest key of the roomiest mount, its name included (each
// mount's own budget is in its blob.MountPoint); the mount points; listings
// that hide keys under objects, and deletes that may repeat, when any
// mounted store's do, so that the handler takes the care that store needs
// in every mount; read-only when every mount is.
func (t *table) Traits() blob.Traits {
	tr := blob.Traits{KeyBudget: t.keyBudget, Mounts: slices.Clone(t.points), ReadOnly: true, ExclusiveNames: true}
	for _, m := range t.mounts {
		mt := blob.TraitsOf(m.store)
		tr.HidesUnderObjects = tr.HidesUnderObjects || mt.HidesUnderObjects
		tr.DeletesMayRepeat = tr.DeletesMayRepeat || mt.DeletesMayRepeat
		tr.ExclusiveNames = tr.ExclusiveNames && mt.ExclusiveNames
		tr.RecordsWrites = tr.RecordsWrites || mt.RecordsWrites
		tr.Encrypted = tr.Encrypted || mt.Encrypted
		tr.ReadOnly = tr.ReadOnly && m.readOnly
	}
	return tr
}

// Close closes every mounted store that needs closing and returns their
// errors joined.
func (t *table) Close() error {
	var errs []error
	for _, m := range t.mounts {
		if err := blob.Close(m.store); err != nil {
			errs = append(errs, fmt.Errorf("mount %q: %w", m.name, err))
		}
	}
	return errors.Join(errs...)
}
