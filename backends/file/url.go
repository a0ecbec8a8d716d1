package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "file"

func init() {
	storeurl.Register(Scheme, storeurl.Backend{Open: openURL, Place: place})
}

// openURL opens the directory a file URL names:
//
//	file:///abs/dir             the absolute path /abs/dir (percent-escapes decoded)
//	file://localhost/abs/dir    the same
//	file:rel/dir, file:./rel    a path relative to the working directory
//	./rel, /abs/dir, rel        a bare path, taken literally (storeurl passes it as u.Path)
//
// A host other than localhost, a user, or a parameter other than the shared
// ones is an error. A missing directory is created by the first write
// (Options.CreateOnWrite); opened read-only (loc.ReadOnly) it is an error
// wrapping ErrNoStore instead, since nothing would ever create it.
func openURL(ctx context.Context, loc *storeurl.Location) (blob.Store, error) {
	dir, err := urlDir(loc.URL)
	if err != nil {
		return nil, err
	}
	if loc.ReadOnly {
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: no directory %s (the first write creates it)", ErrNoStore, dir)
		}
	}
	return Open(ctx, dir, &Options{Timeout: loc.Timeout, CreateOnWrite: true})
}

// urlDir returns the directory a file URL names, as the URL spells it, or
// the error of a URL that names none (see openURL).
func urlDir(u *url.URL) (string, error) {
	if u.User != nil {
		return "", errors.New("file: a file URL has no user or password")
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("file: host %q in a file URL: only local directories are supported (file:///abs/dir)", u.Host)
	}
	dir := u.Path
	if u.Opaque != "" {
		var err error
		if dir, err = url.PathUnescape(u.Opaque); err != nil {
			return "", fmt.Errorf("file: malformed path: %w", err)
		}
	}
	if dir == "" {
		return "", errors.New("file: the URL names no directory: want file:///abs/dir, file:rel/dir or a plain path")
	}
	return dir, nil
}

// place is the storeurl.Place of a file URL: the directory as an absolute
// path, its segments the Prefix (on a system with volume names, the volume
// is the Root). The path is cleaned as text first ("." and ".." segments
// resolved), then the symbolic links on the part of it that exists are
// followed (realPath), so that a link and its target are one place. Names
// are compared byte for byte, whatever the file system's case rules.
func place(loc *storeurl.Location) (storeurl.Place, error) {
	dir, err := urlDir(loc.URL)
	if err != nil {
		return storeurl.Place{}, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return storeurl.Place{}, fmt.Errorf("file: %w", err)
	}
	abs = realPath(abs)
	vol := filepath.VolumeName(abs)
	return storeurl.Place{Root: vol, Prefix: filepath.ToSlash(abs[len(vol):])}, nil
}

// realPath returns the clean absolute path abs with the symbolic links of
// its longest existing leading part followed (filepath.EvalSymlinks); the
// rest, which does not exist yet, as it is. A part that cannot be read
// (no permission) counts as missing.
func realPath(abs string) string {
	head, tail := abs, ""
	for {
		if real, err := filepath.EvalSymlinks(head); err == nil {
			return filepath.Join(real, tail)
		}
		parent := filepath.Dir(head)
		if parent == head {
			return abs
		}
		tail = filepath.Join(filepath.Base(head), tail)
		head = parent
	}
}
