package blob

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Tree is implemented by stores that move or delete a whole tree of keys
// in one call: an atomic move of a key or a directory (Rename), and the
// deletion of a directory in one storage request (DeleteTree), as a Redis
// script or a local file system can. A store that can do only one of the
// two answers errors.ErrUnsupported for the other, and so does a wrapper
// whose inner store lacks it: the package functions Rename and DeleteTree
// then fall back.
//
// Rename moves the object src to dst when the key src exists; otherwise it
// moves every object under the directory src (keys starting with src+"/") to
// the same place under dst. The move is all or nothing: a concurrent reader
// sees every object at its old key or every object at its new key. Each moved
// object gets a new Version. It returns an error wrapping ErrNotExist when
// neither src nor any key under src exists, ErrPrecondition when dst exists
// as a key or any key starts with dst+"/", and ErrInvalidKey when dst equals
// src or lies under it. It changes nothing on error.
//
// DeleteTree deletes every object whose key starts with dir+"/". It returns
// an error wrapping ErrNotExist when there is none. After an error some of
// the objects may be gone; the rest are intact. A store that needs a
// request per object or per batch of objects does not implement it, so
// that the package function DeleteTree lists the tree and calls DeleteKeys
// and WithTimeout bounds each of those requests rather than all of them at
// once.
type Tree interface {
	Rename(ctx context.Context, src, dst string) error
	DeleteTree(ctx context.Context, dir string) error
}

// Rename moves the object src to dst, or the tree under src to dst, with the
// semantics and errors documented on Tree.
//
// If s implements Tree, Rename calls its Rename; otherwise (or when it returns
// errors.ErrUnsupported) it copies each object with Put(IfAbsent), then
// deletes each source with Delete(IfVersion). The fallback is not atomic:
// at every instant each object exists at its old key, its new key or both,
// never neither. If a copy fails, it removes the copies it made and returns
// the error. A source rewritten by another writer after it was copied has
// its newer content carried over to the copy before it is deleted, so no
// concurrent update is lost. If a source delete still fails, Rename tries
// the others and returns the errors joined (never wrapping ErrPrecondition
// or ErrNotExist), leaving the affected objects at both keys.
func Rename(ctx context.Context, s Store, src, dst string) error {
	if err := checkMove(src, dst); err != nil {
		return err
	}
	if r, ok := s.(Tree); ok {
		err := r.Rename(ctx, src, dst)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	return renameByCopy(ctx, s, src, dst)
}

func checkMove(src, dst string) error {
	if err := CheckKey(src); err != nil {
		return err
	}
	if err := CheckKey(dst); err != nil {
		return err
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return fmt.Errorf("%w: cannot move %q into itself (%q)", ErrInvalidKey, src, dst)
	}
	return nil
}

// DeleteTree deletes every object under the directory dir, with the
// semantics and errors documented on Tree.
//
// If s implements Tree, DeleteTree calls its DeleteTree; otherwise (or when it
// returns errors.ErrUnsupported) it lists the tree and deletes its objects
// through DeleteKeys (a BatchDeleter's batches, or DeleteParallel Deletes
// at once); objects deleted by someone else meanwhile are not an error.
func DeleteTree(ctx context.Context, s Store, dir string) error {
	if err := CheckKey(dir); err != nil {
		return err
	}
	if d, ok := s.(Tree); ok {
		err := d.DeleteTree(ctx, dir)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	if n := KeyBytes(s); len(dir) > n {
		return fmt.Errorf("%w: %.40q... is longer than the %d bytes this store's keys can have", ErrInvalidKey, dir, n)
	}
	infos, err := ListAll(ctx, s, dir+"/")
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		return fmt.Errorf("%q: %w", dir+"/", ErrNotExist)
	}
	return DeleteKeys(ctx, s, Keys(infos))
}

// renameByCopy is the portable, non-atomic Rename.
func renameByCopy(ctx context.Context, s Store, src, dst string) error {
	ctx = WithMove(ctx, src, dst)
	data, info, err := s.Get(ctx, src, MaxObjectBytes)
	switch {
	case err == nil:
		if err := checkAbsentTree(ctx, s, dst); err != nil {
			return err
		}
		return moveObjects(ctx, s, []Info{info}, src, dst, map[string][]byte{src: data})
	case !errors.Is(err, ErrNotExist):
		return err
	}
	infos, err := ListAll(ctx, s, src+"/")
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		return fmt.Errorf("%q: %w", src, ErrNotExist)
	}
	if _, err := s.Stat(ctx, dst); err == nil {
		return fmt.Errorf("%q: %w: destination exists", dst, ErrPrecondition)
	} else if !errors.Is(err, ErrNotExist) {
		return err
	}
	if err := checkAbsentTree(ctx, s, dst); err != nil {
		return err
	}
	return moveObjects(ctx, s, infos, src, dst, nil)
}

// checkAbsentTree returns ErrPrecondition when any key lies under dst+"/".
func checkAbsentTree(ctx context.Context, s Store, dst string) error {
	for _, err := range s.List(ctx, dst+"/") {
		if err != nil {
			return err
		}
		return fmt.Errorf("%q: %w: destination directory exists", dst, ErrPrecondition)
	}
	return nil
}

// moveObjects copies every object in infos from under src to under dst, then
// deletes the sources. data holds contents already read, by source key.
func moveObjects(ctx context.Context, s Store, infos []Info, src, dst string, data map[string][]byte) error {
	type copied struct {
		from Info   // the source as read
		to   string // its new key
		ver  string // the version written at the new key
	}
	done := make([]copied, 0, len(infos))
	rollback := func(cause error) error {
		// Remove our copies, but only if nobody rewrote them meanwhile.
		// A cancelled ctx must not stop the cleanup.
		cctx := context.WithoutCancel(ctx)
		errs := []error{cause}
		for _, c := range done {
			if err := s.Delete(cctx, c.to, Cond{IfVersion: c.ver}); err != nil && !errors.Is(err, ErrNotExist) {
				errs = append(errs, fmt.Errorf("undoing copy: %w", err))
			}
		}
		return errors.Join(errs...)
	}
	for _, info := range infos {
		body, ok := data[info.Key]
		if !ok {
			var err error
			body, info, err = s.Get(ctx, info.Key, MaxObjectBytes)
			if err != nil {
				return rollback(err)
			}
		}
		to := dst + strings.TrimPrefix(info.Key, src)
		put, err := s.Put(ctx, to, body, Cond{IfAbsent: true})
		if err != nil {
			return rollback(err)
		}
		done = append(done, copied{from: info, to: to, ver: put.Version})
	}
	// Every object now exists at both keys; drop the sources.
	var errs []error
	for _, c := range done {
		if err := dropSource(ctx, s, c.from, c.to, c.ver); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// moveRetries bounds how often dropSource carries a source's newer content
// over to the destination before it gives up.
const moveRetries = 8

// dropSource deletes the moved object src, whose copy at the key to has
// version toVer. If another writer rewrote src after it was copied, the
// newer content is carried over to the copy (compare-and-swap) and the
// delete is tried again, so that the concurrent edit lands at the new key
// instead of being lost or left behind. If that keeps failing, src stays
// at both keys and the error says so; it never wraps ErrPrecondition, which
// callers read as "destination exists".
func dropSource(ctx context.Context, s Store, src Info, to, toVer string) error {
	for range moveRetries {
		err := s.Delete(ctx, src.Key, Cond{IfVersion: src.Version})
		if err == nil || errors.Is(err, ErrNotExist) {
			return nil
		}
		if !errors.Is(err, ErrPrecondition) {
			return fmt.Errorf("blob: rename: %q was copied to %q but not removed: %w", src.Key, to, err)
		}
		data, info, err := s.Get(ctx, src.Key, MaxObjectBytes)
		if errors.Is(err, ErrNotExist) {
			return nil // deleted by someone else meanwhile: nothing left to move
		}
		if err != nil {
			return fmt.Errorf("blob: rename: %q was copied to %q but not removed: %w", src.Key, to, err)
		}
		put, err := s.Put(ctx, to, data, Cond{IfVersion: toVer})
		if err != nil {
			// The copy was rewritten too (or the store failed): keep both.
			return fmt.Errorf("blob: rename: %q and its copy %q both changed during the move; both are kept: %v", src.Key, to, err)
		}
		src, toVer = info, put.Version
	}
	return fmt.Errorf("blob: rename: %q kept changing during the move; it is kept at both %q and its old key", src.Key, to)
}
