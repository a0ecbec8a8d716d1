//go:build unix

package file

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cloudmem/cloudmem/blob"
)

// This file holds the file-system primitives the store is built on. Every
// path below the root is resolved one segment at a time with openat and
// O_NOFOLLOW, so a symbolic link anywhere under the root is never followed.

const (
	dirMode  = 0o700
	fileMode = 0o600
)

// reserved starts every name the store keeps for itself: the lock file
// .cloudmem-lock, the key lock directory .cloudmem-keylocks, temporary
// files .cloudmem-tmp-* and directories .cloudmem-trash-* being removed, all
// at the root. No key may have a segment with this prefix, in any case of
// its letters, and listings skip such names anywhere (isReservedName).
const reserved = blob.ReservedName + "-"

// isReservedName reports whether the name of a file or directory starts
// with reserved in any case of its letters, as blob.EqualFold compares them
// (the rule of every layer): a case-insensitive file system (macOS,
// Windows) keeps ".CLOUDMEM-lock" at the lock file.
func isReservedName(name string) bool {
	return len(name) >= len(reserved) && blob.EqualFold(name[:len(reserved)], reserved)
}

const lockName = reserved + "lock"

// pathError reports that a path segment below the root is not a directory
// that may be entered: it is missing, a file, or a symbolic link.
type pathError struct {
	rel string // the path, relative to the root, that could not be entered
	err error  // ENOENT, ENOTDIR, errSymlink, or another error from the system
}

func (e *pathError) Error() string { return fmt.Sprintf("%s: %v", e.rel, e.err) }
func (e *pathError) Unwrap() error { return e.err }

// openRoot opens the root directory. The root itself may be reached
// through symbolic links: it is the caller's choice.
func (s *store) openRoot() (int, error) {
	fd, err := unix.Open(s.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("file: open root %s: %w", s.root, err)
	}
	return fd, nil
}

// openDir opens the directory rel ('/'-separated, "" for the root) without
// following symbolic links. A segment that is missing, a file or a symbolic
// link yields a *pathError.
func (s *store) openDir(rel string) (int, error) {
	fd, _, err := s.makeDir(rel, false)
	return fd, err
}

// makeDir is openDir that, with create, makes missing directories with mode
// 0700 and reports whether it made any.
func (s *store) makeDir(rel string, create bool) (fd int, made bool, err error) {
	fd, err = s.openRoot()
	if err != nil || rel == "" {
		return fd, false, err
	}
	done := ""
	for seg := range strings.SplitSeq(rel, "/") {
		done = path.Join(done, seg)
		next, err := openSubdir(fd, seg)
		if errors.Is(err, unix.ENOENT) && create {
			next, err = makeSubdir(fd, seg)
			made = made || err == nil
		}
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			if st, lerr := lstatAt(fd, seg); lerr == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = errSymlink
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, made, &pathError{rel: done, err: err}
		}
		fd = next
	}
	return fd, made, nil
}

func openSubdir(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// makeSubdir creates the directory name in dirfd (if nobody else did) and
// opens it, setting its mode to exactly 0700 whatever the umask.
func makeSubdir(dirfd int, name string) (int, error) {
	if err := unix.Mkdirat(dirfd, name, dirMode); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, err
	}
	fd, err := openSubdir(dirfd, name)
	if err != nil {
		return -1, err
	}
	if err := unix.Fchmod(fd, dirMode); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// splitKey returns the directory and last segment of a key.
func splitKey(key string) (dir, base string) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return "", key
	}
	return key[:i], key[i+1:]
}

// lstatAt stats name in dirfd without following a symbolic link.
func lstatAt(dirfd int, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

func isRegular(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFREG }
func isDir(st *unix.Stat_t) bool     { return st.Mode&unix.S_IFMT == unix.S_IFDIR }

// version derives an object's version from its inode. Every write renames a
// new file into place, and the store sets that file's mtime to a nanosecond
// time later than the mtime of the object it replaces (see nextMtime); a
// Rename moves the objects' mtimes forward the same way. So the versions of
// one key never repeat, even for identical bytes written within one tick of
// the kernel's clock, and even when a deleted file's inode number is reused.
// The ctime is included too, so that edits made outside the store (which
// keep nanosecond mtimes only by chance) are detected as well. Versions
// survive restarts and are the same in every process sharing the directory.
func version(st *unix.Stat_t) string {
	var b [32]byte
	mt, ct := st.Mtim, st.Ctim
	binary.LittleEndian.PutUint64(b[0:], uint64(st.Ino))
	binary.LittleEndian.PutUint64(b[8:], uint64(st.Size))
	binary.LittleEndian.PutUint64(b[16:], uint64(mt.Nano()))
	binary.LittleEndian.PutUint64(b[24:], uint64(ct.Nano()))
	sum := sha256.Sum256(b[:])
	return hex.EncodeToString(sum[:16])
}

func infoOf(key string, st *unix.Stat_t) blob.Info {
	mt := st.Mtim
	return blob.Info{Key: key, Size: st.Size, Version: version(st), Modified: time.Unix(mt.Unix())}
}

// nextMtime returns the mtime for a new version of an object whose current
// file (if any) has stat prev: now, or one nanosecond past prev's mtime when
// the clock has not moved past it.
func nextMtime(prev *unix.Stat_t) unix.Timespec {
	now := time.Now().UnixNano()
	if prev != nil {
		mt := prev.Mtim
		if p := mt.Nano(); now <= p {
			now = p + 1
		}
	}
	return unix.NsecToTimespec(now)
}

// setMtime sets the mtime (and atime) of name in dirfd, never following a
// symbolic link.
func setMtime(dirfd int, name string, mt unix.Timespec) error {
	return unix.UtimesNanoAt(dirfd, name, []unix.Timespec{mt, mt}, unix.AT_SYMLINK_NOFOLLOW)
}

// randomName returns a reserved name for a temporary file or directory.
func randomName(kind string) string {
	return reserved + kind + "-" + rand.Text()
}

// lock takes the store-wide write lock: a channel for this store's
// goroutines, then an advisory flock on ROOT/.cloudmem-lock for other stores
// and processes on the same directory (see flock: a blocking wait, handed
// over as soon as the holder releases it). It waits until ctx is done.
func (s *store) lock(ctx context.Context) (unlock func(), err error) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release := func() { <-s.sem }
	fd, err := unix.Open(s.root+"/"+lockName, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
	if err != nil {
		release()
		return nil, fmt.Errorf("file: open lock file: %w", err)
	}
	if err := flock(ctx, fd); err != nil {
		release()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("file: lock: %w", err)
	}
	return func() {
		unix.Close(fd) // closing the only descriptor releases the flock
		release()
	}, nil
}

// removeEmptyDirs removes the directory rel and then its parents, as long
// as they are empty; it never removes the root. Errors are ignored: a
// directory that is not empty (or not there) simply stays (or stays gone).
// The caller holds the lock, so no write is making a directory meanwhile.
func (s *store) removeEmptyDirs(rel string) {
	for rel != "" {
		parent, base := splitKey(rel)
		fd, err := s.openDir(parent)
		if err != nil {
			return
		}
		err = unix.Unlinkat(fd, base, unix.AT_REMOVEDIR)
		unix.Close(fd)
		if err != nil {
			return
		}
		rel = parent
	}
}

// syncDir flushes a directory's entries to disk, unless NoSync is set or
// ctx allows a lazy sync (blob.WithLazySync).
func (s *store) syncDir(ctx context.Context, fd int) error {
	if !s.syncs(ctx) {
		return nil
	}
	return fsync(fd)
}

// syncParents syncs, after makeDir made directories on the way to rel,
// every directory above rel up to the root, so that the entries of the
// new directories, and so what was written in them, survive a crash of
// the machine; unless NoSync is set or ctx allows a lazy sync. A directory
// that is gone meanwhile (emptied and removed by another writer) needs no
// sync.
func (s *store) syncParents(ctx context.Context, rel string) error {
	if !s.syncs(ctx) {
		return nil
	}
	for rel != "" {
		rel, _ = splitKey(rel)
		fd, err := s.openDir(rel)
		if missing(err) {
			return nil
		}
		if err != nil {
			return err
		}
		err = fsync(fd)
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// fsync is unix.Fsync, every sync the store makes; tests count the calls.
var fsync = unix.Fsync

// syncs reports whether a write made with ctx is flushed to disk before it
// returns: always, unless NoSync is set or ctx allows a lazy sync.
func (s *store) syncs(ctx context.Context) bool {
	return !s.noSync && !blob.LazySync(ctx)
}
