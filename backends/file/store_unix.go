//go:build unix

package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cloudmem/cloudmem/blob"
)

// store is the local-directory blob.Store. See the package documentation.
type store struct {
	root   string        // absolute path of the root directory
	noSync bool          // Options.NoSync
	sem    chan struct{} // holds one token while a goroutine of this store has the write lock
}

var (
	_ blob.Tree = (*store)(nil)
)

func open(root string, opts *Options) (blob.Store, error) {
	s := &store{root: root, noSync: opts.NoSync, sem: make(chan struct{}, 1)}
	// Create the lock file now, with its exact mode; lock recreates it
	// should someone remove it.
	lock, err := os.OpenFile(filepath.Join(root, lockName), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, fileMode)
	if err != nil {
		return nil, fmt.Errorf("file: lock file: %w", err)
	}
	err = lock.Chmod(fileMode)
	lock.Close()
	if err != nil {
		return nil, fmt.Errorf("file: lock file: %w", err)
	}
	s.removeTrash()
	return blob.WithTimeout(s, opts.Timeout), nil
}

// checkKey is blob.CheckKey plus the names this store reserves.
func checkKey(key string) error {
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	return checkReserved(key)
}

// checkReserved refuses a valid key that has a segment this store reserves.
func checkReserved(key string) error {
	for seg := range strings.SplitSeq(key, "/") {
		if isReservedName(seg) {
			return fmt.Errorf("file: %q: %w: names starting with %q are reserved by the file store", key, blob.ErrInvalidKey, reserved)
		}
	}
	return nil
}

func checkCall(ctx context.Context, key string) error {
	if err := blob.CheckCall(ctx, key); err != nil {
		return err
	}
	return checkReserved(key)
}

var _ blob.TraitsReporter = (*store)(nil)

// Traits implements blob.TraitsReporter: a file system keeps a name from
// being both a file and a directory (blob.Traits.ExclusiveNames).
func (s *store) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen, ExclusiveNames: true}
}

func (s *store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if err := checkCall(ctx, key); err != nil {
		return nil, blob.Info{}, err
	}
	if err := blob.CheckLimit(limit); err != nil {
		return nil, blob.Info{}, err
	}
	dir, base := splitKey(key)
	dfd, err := s.openDir(dir)
	if err != nil {
		return nil, blob.Info{}, readErr(key, err)
	}
	// O_NONBLOCK keeps a FIFO planted under the root from blocking us.
	fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	unix.Close(dfd)
	if err != nil {
		return nil, blob.Info{}, readErr(key, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, blob.Info{}, fmt.Errorf("file: %q: %w", key, err)
	}
	if !isRegular(&st) {
		return nil, blob.Info{}, notExist(key, nil)
	}
	if err := blob.CheckSize(key, st.Size, limit); err != nil {
		return nil, blob.Info{}, err
	}
	data := make([]byte, st.Size)
	if err := readFull(fd, data); err != nil {
		return nil, blob.Info{}, fmt.Errorf("file: %q: %w", key, err)
	}
	return data, infoOf(key, &st), nil
}

// readFull fills buf from the regular file fd with read(2) alone: an
// *os.File would add a fcntl and a refused epoll_ctl to every read.
func readFull(fd int, buf []byte) error {
	for len(buf) > 0 {
		n, err := unix.Read(fd, buf)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return io.ErrUnexpectedEOF // shortened since the stat
		}
		buf = buf[n:]
	}
	return nil
}

func (s *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := checkCall(ctx, key); err != nil {
		return blob.Info{}, err
	}
	st, err := s.lstat(key)
	if err != nil {
		return blob.Info{}, readErr(key, err)
	}
	if !isRegular(&st) {
		return blob.Info{}, notExist(key, nil)
	}
	return infoOf(key, &st), nil
}

// lstat stats key without following symbolic links.
func (s *store) lstat(key string) (unix.Stat_t, error) {
	dir, base := splitKey(key)
	dfd, err := s.openDir(dir)
	if err != nil {
		return unix.Stat_t{}, err
	}
	defer unix.Close(dfd)
	return lstatAt(dfd, base)
}

// Put writes the data to a temporary file at the root, outside the lock,
// then under the lock makes the key's directories, checks c and renames the
// file into place. Temporary files live at the root, not beside their
// object, so that no concurrent Rename or DeleteTree can carry them off.
func (s *store) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if err := checkCall(ctx, key); err != nil {
		return blob.Info{}, err
	}
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	rootfd, err := s.openRoot()
	if err != nil {
		return blob.Info{}, err
	}
	defer unix.Close(rootfd)
	tmp := randomName("tmp")
	fd, err := unix.Openat(rootfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
	if err != nil {
		return blob.Info{}, fmt.Errorf("file: %q: create temporary file: %w", key, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	defer f.Close()
	committed := false
	defer func() {
		if !committed {
			unix.Unlinkat(rootfd, tmp, 0)
		}
	}()
	if err := s.writeFile(ctx, f, data); err != nil {
		return blob.Info{}, fmt.Errorf("file: %q: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}

	unlock, err := s.lock(ctx)
	if err != nil {
		return blob.Info{}, err
	}
	defer func() {
		if unlock != nil {
			unlock()
		}
	}()
	dir, base := splitKey(key)
	// IfVersion needs the object, so it needs no new directory.
	create := c.IfVersion == ""
	dfd, made, err := s.makeDir(dir, create)
	if err != nil {
		if made {
			s.removeEmptyDirs(dir)
		}
		if !create && missing(err) {
			return blob.Info{}, precondition(key, "no such object")
		}
		return blob.Info{}, writeErr(key, err)
	}
	defer unix.Close(dfd)
	prev, err := s.existing(dfd, key, base)
	switch {
	case err != nil:
	case c.IfAbsent && prev != nil:
		err = precondition(key, "object exists")
	case c.IfVersion != "" && prev == nil:
		err = precondition(key, "no such object")
	case c.IfVersion != "" && version(prev) != c.IfVersion:
		err = precondition(key, "version differs")
	}
	if err == nil {
		err = setMtime(rootfd, tmp, nextMtime(prev))
	}
	if err == nil {
		err = unix.Renameat(rootfd, tmp, dfd, base)
	}
	if err != nil {
		if made {
			s.removeEmptyDirs(dir)
		}
		if errors.Is(err, blob.ErrPrecondition) {
			return blob.Info{}, err
		}
		return blob.Info{}, fmt.Errorf("file: %q: %w", key, err)
	}
	committed = true
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	unlock()
	unlock = nil
	if err != nil {
		return blob.Info{}, fmt.Errorf("file: %q: written, but: %w", key, err)
	}
	if err := s.syncDir(ctx, dfd); err != nil {
		return blob.Info{}, fmt.Errorf("file: %q: written, but syncing its directory: %w", key, err)
	}
	if made {
		if err := s.syncParents(ctx, dir); err != nil {
			return blob.Info{}, fmt.Errorf("file: %q: written, but syncing the directories made for it: %w", key, err)
		}
	}
	return infoOf(key, &st), nil
}

// existing returns the stat of the object base in dirfd, or nil when there
// is none. An empty directory in the way (left by a crash) is removed; a
// directory holding anything is a conflict.
func (s *store) existing(dirfd int, key, base string) (*unix.Stat_t, error) {
	st, err := lstatAt(dirfd, base)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("file: %q: %w", key, err)
	case isRegular(&st):
		return &st, nil
	case isDir(&st):
		if err := unix.Unlinkat(dirfd, base, unix.AT_REMOVEDIR); err != nil {
			return nil, precondition(key, "it is a directory that holds objects")
		}
		return nil, nil
	}
	return nil, nil // a symbolic link or other file: not an object; the rename replaces the name itself
}

func (s *store) writeFile(ctx context.Context, f *os.File, data []byte) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(fileMode); err != nil { // exactly 0600, whatever the umask
		return err
	}
	if !s.syncs(ctx) {
		return nil
	}
	return fsync(int(f.Fd()))
}

func (s *store) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := checkReserved(key); err != nil {
		return err
	}
	if err := blob.CheckDelete(ctx, key, c); err != nil {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	dir, base := splitKey(key)
	dfd, err := s.openDir(dir)
	if err != nil {
		if !missing(err) {
			return fmt.Errorf("file: %q: %w", key, err)
		}
		if c.IfVersion != "" {
			return precondition(key, "no such object")
		}
		return notExist(key, err)
	}
	defer unix.Close(dfd)
	st, err := lstatAt(dfd, base)
	exists := err == nil && isRegular(&st)
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("file: %q: %w", key, err)
	}
	switch {
	case c.IfVersion != "" && !exists:
		return precondition(key, "no such object")
	case !exists:
		return notExist(key, nil)
	case c.IfVersion != "" && version(&st) != c.IfVersion:
		return precondition(key, "version differs")
	}
	if err := unix.Unlinkat(dfd, base, 0); err != nil {
		return fmt.Errorf("file: %q: %w", key, err)
	}
	s.removeEmptyDirs(dir)
	if err := s.syncDir(ctx, dfd); err != nil {
		return fmt.Errorf("file: %q: deleted, but syncing its directory: %w", key, err)
	}
	return nil
}

func (s *store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return blob.CheckedList(ctx, prefix, func(yield func(blob.Info, error) bool) {
		infos, err := s.collect(ctx, prefix)
		if err != nil {
			yield(blob.Info{}, err)
			return
		}
		// A directory walk yields "a/b" before "a-c"; keys sort by bytes.
		blob.YieldSorted(ctx, infos, yield)
	})
}
