// Package keylock holds locks by name within one process. It is the
// in-process half of two stores' blob.Locker: the file store's
// create-on-write store takes it before the directory's lock file (and
// has nothing else while the directory is missing), and Redis queues the
// process's goroutines in it before one of them waits on the server.
package keylock

import (
	"context"
	"sync"
)

// Locks are locks by name, made on first use and dropped once nobody holds
// or waits for them, so that a process that locks many names keeps none it
// no longer uses. Locks of different names never wait for each other. The
// zero value is ready; a Locks is safe for concurrent use and must not be
// copied after first use.
type Locks struct {
	mu    sync.Mutex
	locks map[string]*lock
}

// lock is one name's lock: ch has a buffer of one, full while held, and
// users counts its holder and waiters.
type lock struct {
	ch    chan struct{}
	users int
}

// Lock waits until the caller holds name's lock, or until ctx is done. A
// done ctx (before or during the wait) makes it return ctx's error holding
// nothing, even when the lock was free. The unlock it returns may be
// called more than once, also at once from several goroutines: the first
// call releases the lock, the others do nothing.
func (k *Locks) Lock(ctx context.Context, name string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*lock{}
	}
	l := k.locks[name]
	if l == nil {
		l = &lock{ch: make(chan struct{}, 1)}
		k.locks[name] = l
	}
	l.users++
	k.mu.Unlock()
	select {
	case l.ch <- struct{}{}:
		if err := ctx.Err(); err != nil { // select picks at random when both are ready
			<-l.ch
			k.leave(name, l)
			return nil, err
		}
	case <-ctx.Done():
		k.leave(name, l)
		return nil, ctx.Err()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			<-l.ch
			k.leave(name, l)
		})
	}, nil
}

// Len returns how many names have a lock, held or waited for.
func (k *Locks) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.locks)
}

// leave counts one user of name's lock l out, and drops l with its last.
func (k *Locks) leave(name string, l *lock) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if l.users--; l.users == 0 {
		delete(k.locks, name)
	}
}
