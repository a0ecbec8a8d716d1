package file

import "golang.org/x/sys/unix"

// renameNoReplace renames like renameat(2) but fails with EEXIST instead of
// replacing an existing destination.
func renameNoReplace(olddirfd int, oldname string, newdirfd int, newname string) error {
	return unix.RenameatxNp(olddirfd, oldname, newdirfd, newname, unix.RENAME_EXCL)
}
