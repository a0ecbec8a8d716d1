package dirsync

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/cloudmem/cloudmem/blob"
)

// noFollow makes an open fail on a symbolic link rather than follow it.
const noFollow = syscall.O_NOFOLLOW

// localFile is one regular file found in the folder.
type localFile struct {
	key     string // its path relative to the folder, '/'-separated: the store key
	size    int64
	modNano int64
}

// local is the folder, reached only through an os.Root so that nothing
// escapes it, and with every symbolic link refused rather than followed.
type local struct {
	root *os.Root
	// fail, when set (by tests), is asked before every change to the folder
	// and makes it fail with its error: the crash-injection point.
	fail func(op, key string) error
}

func openLocal(dir string) (*local, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("dirsync: the folder: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%w: the folder %s is a symbolic link (links are not followed); nothing was changed: "+
			"sync the folder it points to", ErrLinked, dir)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("dirsync: the folder %s is not a directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("dirsync: the folder: %w", err)
	}
	return &local{root: root}, nil
}

func (l *local) close() error { return l.root.Close() }

// isTemp reports whether name is one of this package's temporary files.
func isTemp(name string) bool { return strings.HasPrefix(name, tempPrefix) }

// tempPrefix starts the names of the temporary files of atomic writes. It
// is a reserved name (blob.IsReservedSegment), so such a file is never
// uploaded even if a crash leaves it behind.
const tempPrefix = blob.ReservedName + "-sync-tmp-"

// scan walks the folder. It calls visit for every regular file and skip for
// everything else it passes over (symbolic links, devices, unreadable
// directories), with a reason. Directories are walked in name order.
func (l *local) scan(visit func(localFile), skip func(key, reason string)) error {
	return fs.WalkDir(l.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			skip(p, fmt.Sprintf("cannot be read: %v", errors.Unwrap(err)))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if p == "." {
			return nil
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			skip(p, linkReason)
			return nil
		case d.IsDir():
			return nil
		case !t.IsRegular():
			skip(p, "is not a regular file")
			return nil
		}
		if isTemp(path.Base(p)) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			skip(p, fmt.Sprintf("cannot be read: %v", err))
			return nil
		}
		visit(localFile{key: p, size: fi.Size(), modNano: fi.ModTime().UnixNano()})
		return nil
	})
}

// linkReason is why scan skips a symbolic link.
const linkReason = "is a symbolic link (links are not followed)"

// stat returns the current size and modification time of a regular file,
// refusing links.
func (l *local) stat(key string) (localFile, error) {
	fi, err := l.root.Lstat(key)
	if err != nil {
		return localFile{}, err
	}
	if !fi.Mode().IsRegular() {
		return localFile{}, fmt.Errorf("%s is not a regular file", key)
	}
	return localFile{key: key, size: fi.Size(), modNano: fi.ModTime().UnixNano()}, nil
}

// read returns a file's content, at most limit bytes: a larger file is an
// error for which errors.Is(err, errTooLarge) is true.
func (l *local) read(key string, limit int64) ([]byte, error) {
	if err := l.noLinks(key); err != nil {
		return nil, err
	}
	f, err := l.root.OpenFile(key, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, min(limit, maxInt-1)+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}

var errTooLarge = errors.New("too large")

// noLinks refuses a key one of whose ancestors is a symbolic link (os.Root
// would follow it inside the folder).
func (l *local) noLinks(key string) error {
	dir := path.Dir(key)
	for dir != "." {
		fi, err := l.root.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			dir = path.Dir(dir)
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link (links are not followed)", dir)
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is a file, not a directory", dir)
		}
		dir = path.Dir(dir)
	}
	return nil
}

// write replaces (or creates) the file key with data atomically. Just
// before the rename it checks that the file still holds the content whose
// SHA-256 is expect (or, for absent, does not exist), so a local edit made
// during the pass is not overwritten.
func (l *local) write(key string, data []byte, expect string) error {
	if l.fail != nil {
		if err := l.fail("write", key); err != nil {
			return err
		}
	}
	if err := l.noLinks(key); err != nil {
		return err
	}
	dir := path.Dir(key)
	if dir != "." {
		if err := l.root.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(dir, tempPrefix+hex.EncodeToString(rnd[:]))
	f, err := l.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = l.check(key, expect)
	}
	if err == nil {
		err = l.root.Rename(tmp, key)
	}
	if err != nil {
		l.root.Remove(tmp)
		return err
	}
	return nil
}

// errChangedMeanwhile means a local file changed while the pass ran.
var errChangedMeanwhile = errors.New("changed locally while the sync ran")

// check verifies that the file key still holds the content whose SHA-256 is
// expect, or, with expect == absent, that it does not exist. An empty
// expect checks nothing.
func (l *local) check(key, expect string) error {
	if expect == "" {
		return nil
	}
	cur, err := l.read(key, maxInt)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if expect == absent {
			return nil
		}
		return errChangedMeanwhile
	case err != nil:
		return err
	case expect == absent, hashOf(cur) != expect:
		return errChangedMeanwhile
	}
	return nil
}

// absent is the expectation that a file does not exist yet.
const absent = "absent"

const maxInt = int64(^uint64(0) >> 1)

// remove deletes the file key if it still holds the content whose SHA-256
// is expect, then removes the directories it leaves empty (never the
// folder itself).
func (l *local) remove(key, expect string) error {
	if l.fail != nil {
		if err := l.fail("remove", key); err != nil {
			return err
		}
	}
	if err := l.check(key, expect); err != nil {
		return err
	}
	if err := l.root.Remove(key); err != nil {
		return err
	}
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if l.root.Remove(dir) != nil { // not empty (or gone): stop
			break
		}
	}
	return nil
}
