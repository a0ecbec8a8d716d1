//go:build unix

package file

import "sync/atomic"

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
