//go:build unix

package file

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/cloudmem/cloudmem/blob"
)

// The store's errors: each names the key and wraps the blob sentinel that
// applies and the system's error.

// errSymlink is the cause of errors about symbolic links under the root.
var errSymlink = errors.New("symbolic link (not followed)")

func notExist(key string, cause error) error {
	if cause == nil {
		return fmt.Errorf("file: %q: %w", key, blob.ErrNotExist)
	}
	return fmt.Errorf("file: %q: %w: %w", key, blob.ErrNotExist, cause)
}

func precondition(key, why string) error {
	return fmt.Errorf("file: %q: %w: %s", key, blob.ErrPrecondition, why)
}

// missing reports whether err means a path does not lead to an object: a
// segment is absent, is a file where a directory should be, or is a
// symbolic link.
func missing(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, errSymlink) || errors.Is(err, unix.ELOOP)
}

// readErr maps an error from resolving key for reading.
func readErr(key string, err error) error {
	if missing(err) {
		return notExist(key, err)
	}
	return fmt.Errorf("file: %q: %w", key, err)
}

// writeErr maps an error from resolving (and creating) key's directory for
// writing: a file in the way is a conflict, a symbolic link is refused.
func writeErr(key string, err error) error {
	var pe *pathError
	if errors.As(err, &pe) && errors.Is(err, unix.ENOTDIR) {
		return precondition(key, fmt.Sprintf("%q is an object, so it cannot be a directory", pe.rel))
	}
	return fmt.Errorf("file: %q: %w", key, err)
}
