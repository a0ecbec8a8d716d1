//go:build unix

package file

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudmem/cloudmem/blob"
)

// collect returns the objects whose keys start with prefix, walking only the
// directory that can hold them: "a/b" and "a/" walk ROOT/a, "a" walks ROOT.
func (s *store) collect(ctx context.Context, prefix string) ([]blob.Info, error) {
	start := prefix[:strings.LastIndexByte(prefix, '/')+1]
	fd, err := s.openDir(strings.TrimSuffix(start, "/"))
	if missing(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("file: list %q: %w", prefix, err)
	}
	var out []blob.Info
	if err := walk(ctx, fd, start, prefix, &out); err != nil {
		return nil, fmt.Errorf("file: list %q: %w", prefix, err)
	}
	return out, nil
}

// walk appends to out the objects under the directory dirfd, whose keys
// start with dirKey, that match prefix. It closes dirfd. It skips reserved
// names, symbolic links, special files and names that are no valid key.
func walk(ctx context.Context, dirfd int, dirKey, prefix string, out *[]blob.Info) error {
	defer unix.Close(dirfd)
	names, err := readNames(dirfd)
	if errors.Is(err, unix.ENOENT) {
		return nil // removed since we opened it
	}
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := dirKey + name
		if isReservedName(name) || blob.CheckKey(key) != nil {
			continue
		}
		st, err := lstatAt(dirfd, name)
		switch {
		case errors.Is(err, unix.ENOENT):
			continue // deleted since readNames
		case err != nil:
			return err
		case isRegular(&st):
			if strings.HasPrefix(key, prefix) {
				*out = append(*out, infoOf(key, &st))
			}
		case isDir(&st):
			sub := key + "/"
			if !strings.HasPrefix(sub, prefix) && !strings.HasPrefix(prefix, sub) {
				continue
			}
			cfd, err := openSubdir(dirfd, name)
			if missing(err) {
				continue // removed or replaced since lstat
			}
			if err != nil {
				return err
			}
			if err := walk(ctx, cfd, sub, prefix, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// readNames returns the names in the directory dirfd, without closing it.
func readNames(dirfd int) ([]string, error) {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), "directory")
	defer f.Close()
	return f.Readdirnames(-1)
}

// visitObjects calls fn for every object in the tree under the directory
// name in parentfd, in no particular order, skipping what walk skips. It
// stops at the first error fn returns and returns it.
func visitObjects(parentfd int, name string, fn func(dirfd int, name string, st *unix.Stat_t) error) error {
	fd, err := openSubdir(parentfd, name)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	names, err := readNames(fd)
	if err != nil {
		return err
	}
	for _, n := range names {
		if isReservedName(n) {
			continue
		}
		st, err := lstatAt(fd, n)
		switch {
		case errors.Is(err, unix.ENOENT):
		case err != nil:
			return err
		case isRegular(&st):
			if err := fn(fd, n, &st); err != nil {
				return err
			}
		case isDir(&st):
			if err := visitObjects(fd, n, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// errFound stops visitObjects at the first object.
var errFound = errors.New("found")

// holdsObject reports whether the directory name in parentfd has an object
// anywhere below it.
func holdsObject(parentfd int, name string) (bool, error) {
	err := visitObjects(parentfd, name, func(int, string, *unix.Stat_t) error { return errFound })
	if err == errFound {
		return true, nil
	}
	return false, err
}

// Rename implements blob.Tree with one rename(2) under the lock. Moved
// objects get new versions: their mtimes are moved forward, still under the
// lock, right after the rename.
func (s *store) Rename(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkKey(src); err != nil {
		return err
	}
	if err := checkKey(dst); err != nil {
		return err
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return fmt.Errorf("file: cannot move %q into itself (%q): %w", src, dst, blob.ErrInvalidKey)
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()

	srcDir, srcBase := splitKey(src)
	sfd, err := s.openDir(srcDir)
	if err != nil {
		return readErr(src, err)
	}
	defer unix.Close(sfd)
	st, err := lstatAt(sfd, srcBase)
	if err != nil {
		return readErr(src, err)
	}
	switch {
	case isRegular(&st):
	case isDir(&st):
		found, err := holdsObject(sfd, srcBase)
		if err != nil {
			return fmt.Errorf("file: %q: %w", src, err)
		}
		if !found {
			return notExist(src, nil)
		}
	default:
		return notExist(src, nil)
	}

	dstDir, dstBase := splitKey(dst)
	dfd, made, err := s.makeDir(dstDir, true)
	if err != nil {
		s.removeEmptyDirs(dstDir)
		return writeErr(dst, err)
	}
	defer unix.Close(dfd)
	if err := s.clearDestination(dfd, dst, dstBase); err != nil {
		s.removeEmptyDirs(dstDir)
		return err
	}

	err = renameNoReplace(sfd, srcBase, dfd, dstBase)
	if errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY) {
		s.removeEmptyDirs(dstDir)
		return precondition(dst, "destination exists")
	}
	if err != nil {
		s.removeEmptyDirs(dstDir)
		return fmt.Errorf("file: rename %q to %q: %w", src, dst, err)
	}
	// New versions for the moved objects, before anyone can write them:
	// we still hold the lock.
	touch := func(dirfd int, name string, st *unix.Stat_t) error {
		return setMtime(dirfd, name, nextMtime(st))
	}
	if isRegular(&st) {
		err = touch(dfd, dstBase, &st)
	} else {
		err = visitObjects(dfd, dstBase, touch)
	}
	if err != nil {
		return fmt.Errorf("file: renamed %q to %q, but renewing versions: %w", src, dst, err)
	}
	s.removeEmptyDirs(srcDir)
	// Both directories' entries changed; each is synced once. The source's
	// is the destination's, or, when the rename made directories, one of
	// the ancestors syncParents syncs, or a directory of its own: then the
	// two syncs are independent and run at once (on ext4 that cuts about a
	// third of a rename's time: docs/benchmarks-by-hand.md).
	var srcErr error
	var wg sync.WaitGroup
	if srcDir != dstDir && !(made && ancestor(srcDir, dstDir)) {
		wg.Go(func() { srcErr = s.syncDir(ctx, sfd) })
	}
	dstErr := s.syncDir(ctx, dfd)
	wg.Wait()
	if err := errors.Join(dstErr, srcErr); err != nil {
		return fmt.Errorf("file: renamed %q to %q, but syncing: %w", src, dst, err)
	}
	if made {
		if err := s.syncParents(ctx, dstDir); err != nil {
			return fmt.Errorf("file: renamed %q to %q, but syncing the directories made for it: %w", src, dst, err)
		}
	}
	return nil
}

// ancestor reports whether the directory a ("" for the root) holds the
// directory b at some depth.
func ancestor(a, b string) bool {
	return b != a && (a == "" || strings.HasPrefix(b, a+"/"))
}

// clearDestination makes sure nothing is at name in dirfd: an object or a
// directory holding one is ErrPrecondition; empty directories left by a
// crash are removed.
func (s *store) clearDestination(dirfd int, key, name string) error {
	st, err := lstatAt(dirfd, name)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return fmt.Errorf("file: %q: %w", key, err)
	case isRegular(&st):
		return precondition(key, "destination exists")
	case !isDir(&st):
		return fmt.Errorf("file: %q: %w is in the way", key, errSymlink)
	}
	found, err := holdsObject(dirfd, name)
	if err != nil {
		return fmt.Errorf("file: %q: %w", key, err)
	}
	if found || removeEmptyTree(dirfd, name) != nil {
		return precondition(key, "destination directory exists")
	}
	return nil
}

// removeEmptyTree removes the directory name in dirfd if it holds nothing
// but empty directories.
func removeEmptyTree(dirfd int, name string) error {
	fd, err := openSubdir(dirfd, name)
	if err != nil {
		return err
	}
	names, err := readNames(fd)
	for _, n := range names {
		if err == nil {
			err = removeEmptyTree(fd, n)
		}
	}
	unix.Close(fd)
	if err != nil {
		return err
	}
	return unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR)
}

// DeleteTree implements blob.Tree: under the lock it renames the
// directory aside in one step, so readers see all of the tree or none of it,
// then removes it outside the lock. If that removal fails, the next Open of
// the directory finishes it; the tree is gone from the store either way.
func (s *store) DeleteTree(ctx context.Context, dir string) error {
	if err := checkCall(ctx, dir); err != nil {
		return err
	}
	trash, err := s.moveToTrash(ctx, dir)
	if err != nil {
		return err
	}
	_ = os.RemoveAll(filepath.Join(s.root, trash))
	return nil
}

// moveToTrash renames the directory dir to a reserved name at the root.
func (s *store) moveToTrash(ctx context.Context, dir string) (string, error) {
	unlock, err := s.lock(ctx)
	if err != nil {
		return "", err
	}
	defer unlock()
	parent, base := splitKey(dir)
	pfd, err := s.openDir(parent)
	if err != nil {
		return "", readErr(dir+"/", err)
	}
	defer unix.Close(pfd)
	if st, err := lstatAt(pfd, base); err != nil || !isDir(&st) {
		return "", notExist(dir+"/", err)
	}
	found, err := holdsObject(pfd, base)
	if err != nil {
		return "", fmt.Errorf("file: %q: %w", dir+"/", err)
	}
	if !found {
		return "", notExist(dir+"/", nil)
	}
	rootfd, err := s.openRoot()
	if err != nil {
		return "", err
	}
	defer unix.Close(rootfd)
	trash := randomName("trash")
	if err := unix.Renameat(pfd, base, rootfd, trash); err != nil {
		return "", fmt.Errorf("file: delete %q: %w", dir+"/", err)
	}
	s.removeEmptyDirs(parent)
	if err := s.syncDir(ctx, pfd); err != nil {
		return "", fmt.Errorf("file: deleted %q, but syncing: %w", dir+"/", err)
	}
	return trash, nil
}

// staleTmpAge is the age from which a temporary file in the root is a
// crashed write's leftover: a write in flight holds its file for well under
// a second, so an hour is far beyond any live one.
const staleTmpAge = time.Hour

// removeTrash finishes DeleteTree calls that a crash interrupted, and
// removes the temporary files of crashed writes: regular files
// ROOT/.cloudmem-tmp-* last modified more than staleTmpAge before now.
// It is best effort (a failure leaves the leftover for a later open).
func (s *store) removeTrash() {
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasPrefix(name, reserved+"trash-"):
			_ = os.RemoveAll(filepath.Join(s.root, name))
		case strings.HasPrefix(name, reserved+"tmp-") && e.Type().IsRegular():
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleTmpAge {
				_ = os.Remove(filepath.Join(s.root, name))
			}
		}
	}
}
