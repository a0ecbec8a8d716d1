//go:build unix

package file

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/cloudmem/cloudmem/blob"
)

// Key locks (blob.Locker) are flocks on lock files in one reserved
// directory at the root, ROOT/.cloudmem-keylocks: a key's lock is the file
// named by the first bits of its SHA-256, one of keyLockFiles. A bounded
// set of files, created on first use and never removed, because removing a
// lock file that someone waits on would let a newcomer lock a new file
// beside them. Two keys share a lock file with a chance of 1 in
// keyLockFiles; sharing only makes one wait for the other, never breaks
// exclusion.
const (
	keyLockDir   = reserved + "keylocks"
	keyLockFiles = 4096
)

var _ blob.Locker = (*store)(nil)

// keyLockName returns the name of key's lock file in keyLockDir.
func keyLockName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return fmt.Sprintf("%03x", binary.BigEndian.Uint16(sum[:])%keyLockFiles)
}

// Lock takes the lock on key (see blob.Locker): an exclusive flock on key's
// lock file, which excludes other goroutines and processes locking the
// same key (or a key sharing its lock file), and nothing else: it is
// independent of the store-wide lock every write takes for a moment, and
// of locks on other keys. It waits, without polling, until it holds the
// lock or ctx is done. The lock is released by unlock, or when the process
// exits.
func (s *store) Lock(ctx context.Context, key string) (unlock func(), err error) {
	if err := checkCall(ctx, key); err != nil {
		return nil, err
	}
	rootfd, err := s.openRoot()
	if err != nil {
		return nil, err
	}
	// The lock directory is made once; after that, opening it changes
	// nothing on disk (a mkdir and chmod on every lock would be metadata
	// the writers' fsyncs then have to commit).
	dfd, err := openSubdir(rootfd, keyLockDir)
	if errors.Is(err, unix.ENOENT) {
		dfd, err = makeSubdir(rootfd, keyLockDir)
	}
	unix.Close(rootfd)
	if err != nil {
		return nil, fmt.Errorf("file: %q: lock directory: %w", key, err)
	}
	fd, err := unix.Openat(dfd, keyLockName(key), unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
	unix.Close(dfd)
	if err != nil {
		return nil, fmt.Errorf("file: %q: lock file: %w", key, err)
	}
	if err := flock(ctx, fd); err != nil {
		return nil, fmt.Errorf("file: %q: lock: %w", key, err)
	}
	var once sync.Once
	return func() { once.Do(func() { unix.Close(fd) }) }, nil
}

// flock takes an exclusive flock on fd, waiting until it has it or ctx is
// done. It owns fd on failure: fd is closed then (if a wait was cut short
// by ctx, as soon as the abandoned wait returns, which releases whatever it
// got). The wait blocks in the kernel, which hands the lock over the moment
// it is released, instead of polling.
func flock(ctx context.Context, fd int) error {
	err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
		unix.Close(fd)
		return err
	}
	if err := ctx.Err(); err != nil {
		unix.Close(fd)
		return err
	}
	done := make(chan error, 1)
	go func() {
		for {
			err := unix.Flock(fd, unix.LOCK_EX)
			if !errors.Is(err, unix.EINTR) {
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			unix.Close(fd)
		}
		return err
	case <-ctx.Done():
		go func() {
			<-done
			unix.Close(fd)
		}()
		return ctx.Err()
	}
}
