//go:build unix

package file

// KeyLockName is keyLockName, for the tests of package file_test.
var KeyLockName = keyLockName
