//go:build unix

package file

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// KeyLockName is keyLockName, for the tests of package file_test.
var KeyLockName = keyLockName

// CountSyncs makes every fsync of the store count in *n until the test
// ends. Tests that call it must not run in parallel.
func CountSyncs(t interface{ Cleanup(func()) }, n *atomic.Int64) {
	old := fsync
	fsync = func(fd int) error {
		n.Add(1)
		return old(fd)
	}
	t.Cleanup(func() { fsync = old })
}

// LockedKeys is how many keys the create-on-write store s keeps a lock of
// in its process (held or waited for).
func LockedKeys(s interface{}) int {
	return s.(*lazyStore).local.Len()
}

// FailSyncsOf makes every fsync of the directory (or file) at path fail
// with err until the test ends. Tests that call it must not run in
// parallel.
func FailSyncsOf(t interface {
	Cleanup(func())
	Fatal(...any)
}, path string, err error) {
	var want unix.Stat_t
	if e := unix.Stat(path, &want); e != nil {
		t.Fatal(e)
	}
	old := fsync
	fsync = func(fd int) error {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Dev == want.Dev && st.Ino == want.Ino {
			return err
		}
		return old(fd)
	}
	t.Cleanup(func() { fsync = old })
}
