//go:build unix && !linux && !darwin

package file

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames like renameat(2) but fails with EEXIST instead of
// replacing an existing destination. Without a kernel call for that, it
// checks first; the store's lock makes the check exact against every other
// writer that goes through a store.
func renameNoReplace(olddirfd int, oldname string, newdirfd int, newname string) error {
	var st unix.Stat_t
	err := unix.Fstatat(newdirfd, newname, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err == nil {
		return unix.EEXIST
	}
	if !errors.Is(err, unix.ENOENT) {
		return err
	}
	return unix.Renameat(olddirfd, oldname, newdirfd, newname)
}
