package blobtest

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// lockTests check blob.Locker on a store that has a lock (its own, or its
// inner store's through a wrapper); a store without one skips them, saying
// so.
var lockTests = []test{
	{"LockExcludes", testLockExcludes},
	{"LockKeysApart", testLockKeysApart},
	{"LockWaitCancelled", testLockWaitCancelled},
	{"LockUnlockTwice", testLockUnlockTwice},
}

// lockOf returns s's Locker, or skips the test when s has no lock.
func lockOf(t *testing.T, s blob.Store) blob.Locker {
	t.Helper()
	l, ok := s.(blob.Locker)
	if !ok {
		t.Skip("the store is no blob.Locker")
	}
	unlock, err := l.Lock(t.Context(), "probe")
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip("the store's Lock answers errors.ErrUnsupported: it wraps a store without a lock")
	}
	if err != nil {
		t.Fatalf("Lock(probe): %v", err)
	}
	unlock()
	return l
}

// lockWithin takes l's lock on key, failing the test when it takes longer
// than a generous bound (a lock that is not released would hang the test).
func lockWithin(t *testing.T, l blob.Locker, key string) func() {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	unlock, err := l.Lock(ctx, key)
	if err != nil {
		t.Fatalf("Lock(%q): %v", key, err)
	}
	return unlock
}

// testLockExcludes: writers released at once, each adding one to a number
// with an unconditional read-modify-write under the lock, lose no addition,
// and never two hold the lock at once. Locking writes no key.
func testLockExcludes(t *testing.T, s blob.Store) {
	l := lockOf(t, s)
	const rounds = 4
	var holders, most atomic.Int32
	errs := race(func(i int) error {
		for range rounds {
			unlock, err := l.Lock(t.Context(), "counter")
			if err != nil {
				return err
			}
			n := holders.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			err = addOne(t.Context(), s, "counter")
			holders.Add(-1)
			unlock()
			if err != nil {
				return err
			}
		}
		return nil
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if m := most.Load(); m != 1 {
		t.Fatalf("%d writers held the lock at once", m)
	}
	wantContent(t, s, "counter", []byte(strconv.Itoa(racers*rounds)))
	wantKeys(t, s, "", "counter")
}

// addOne reads the number at key (0 when missing) and writes it back one
// higher, unconditionally.
func addOne(ctx context.Context, s blob.Store, key string) error {
	n := 0
	data, _, err := s.Get(ctx, key, 64)
	switch {
	case err == nil:
		if n, err = strconv.Atoi(string(data)); err != nil {
			return err
		}
	case !errors.Is(err, blob.ErrNotExist):
		return err
	}
	_, err = s.Put(ctx, key, []byte(strconv.Itoa(n+1)), blob.Cond{})
	return err
}

// testLockKeysApart: the lock on one key does not hold up the locks on
// others. The blob.Locker contract lets a store map distinct keys to one
// lock (the file store's 4,096 lock files, picked by a hash of the key),
// so of eight other keys at most two may wait.
func testLockKeysApart(t *testing.T, s blob.Store) {
	l := lockOf(t, s)
	unlockA := lockWithin(t, l, "d/a")
	defer unlockA()
	var waited []string
	for i := range 8 {
		key := "d/b" + strconv.Itoa(i)
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		unlock, err := l.Lock(ctx, key)
		cancel()
		switch {
		case err == nil:
			unlock()
		case errors.Is(err, context.DeadlineExceeded):
			waited = append(waited, key)
		default:
			t.Fatalf("Lock(%s) while d/a is held: %v", key, err)
		}
	}
	if len(waited) > 2 {
		t.Fatalf("Lock of %q waited while d/a was held; want at most two keys to share its lock", waited)
	}
}

// testLockWaitCancelled: a Lock that waits for a held key returns its
// context's error when the context ends, and holds nothing; once the
// holder unlocks, the key can be locked again.
func testLockWaitCancelled(t *testing.T, s blob.Store) {
	l := lockOf(t, s)
	unlock := lockWithin(t, l, "k")
	wantHeld(t, l, "k", "Lock of a held key until its context ended")
	unlock()
	lockWithin(t, l, "k")()
}

// testLockUnlockTwice: calling unlock again does nothing, not even release
// the lock another caller took since.
func testLockUnlockTwice(t *testing.T, s blob.Store) {
	l := lockOf(t, s)
	first := lockWithin(t, l, "k")
	first()
	second := lockWithin(t, l, "k")
	defer second()
	first() // must not release the second holder's lock
	wantHeld(t, l, "k", "Lock while held, after the earlier holder's second unlock")
}

// wantHeld checks that a Lock of key, which another caller holds, waits
// until its context ends and then returns the context's error.
func wantHeld(t *testing.T, l blob.Locker, key, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if u, err := l.Lock(ctx, key); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			u()
		}
		t.Fatalf("%s = %v, want context.DeadlineExceeded", what, err)
	}
}
