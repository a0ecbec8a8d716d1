package blob

import (
	"context"
	"errors"
)

// Locker is implemented by stores that can lock one key across a
// read-modify-write, so that writers taking turns on one object never lose
// a race: a writer that holds the lock reads the object, edits it and
// writes it back with Put(IfVersion), and no other holder of the lock on
// that key writes in between.
//
// Lock waits until the caller holds the lock on key, or until ctx is done
// (then it returns ctx's error and holds nothing). The returned unlock
// releases it; calling unlock more than once is harmless. The lock is
// advisory: it excludes other holders of the lock on the same key, in this
// process and, for stores shared between processes, in other processes;
// it does not block writers that do not take it, so conditional writes
// stay the guarantee and the lock only spares them their conflicts. Locks
// on different keys do not wait for each other (a store may map distinct
// keys to one lock, and say so). A key need not exist to be locked. A
// caller must not take a second lock while holding one, which could
// deadlock against a caller taking the same two in the other order.
//
// A store whose lock is shared between processes may make it a lease, so
// that a holder that dies does not keep the others out for long: it renews
// the lease until unlock and, should the holder lose it all the same (the
// server unreachable for a lease), refuses the holder's Put of key with an
// error for which errors.Is(err, ErrPrecondition) is true, as a lost race
// is refused, so that no write of the holder goes through outside its turn.
//
// A wrapper whose inner store is not a Locker returns an error wrapping
// errors.ErrUnsupported, which makes the package function Lock fall back.
type Locker interface {
	Lock(ctx context.Context, key string) (unlock func(), err error)
}

// Lock takes s's lock on key (see Locker) and returns the function that
// releases it. If s does not implement Locker, or answers
// errors.ErrUnsupported, Lock holds nothing and returns at once with an
// unlock that does nothing: the caller's conditional writes decide races,
// as they would anyway.
func Lock(ctx context.Context, s Store, key string) (unlock func(), err error) {
	if l, ok := s.(Locker); ok {
		unlock, err := l.Lock(ctx, key)
		if !errors.Is(err, errors.ErrUnsupported) {
			return unlock, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return func() {}, nil
}

var (
	_ Locker = (*prefixStore)(nil)
	_ Locker = readOnlyStore{}
	_ Locker = (*Counter)(nil)
	_ Locker = (*plainStore)(nil)
)

// Lock locks the key of the inner store under the prefix.
func (p *prefixStore) Lock(ctx context.Context, key string) (func(), error) {
	l, ok := p.inner.(Locker)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	k, err := p.full(key)
	if err != nil {
		return nil, err
	}
	return l.Lock(ctx, k)
}

// Lock forwards to the inner store: a lock is not a write.
func (r readOnlyStore) Lock(ctx context.Context, key string) (func(), error) {
	return forwardLock(ctx, r.inner, key)
}

// Lock forwards to the inner store; it is not counted as a storage call.
func (c *Counter) Lock(ctx context.Context, key string) (func(), error) {
	return forwardLock(ctx, c.inner, key)
}

// Lock forwards to the inner store after the check for encryption.
func (p *plainStore) Lock(ctx context.Context, key string) (func(), error) {
	if err := p.check(ctx); err != nil {
		return nil, err
	}
	return forwardLock(ctx, p.inner, key)
}

// forwardLock is the Lock of a wrapper that leaves keys as they are.
func forwardLock(ctx context.Context, inner Store, key string) (func(), error) {
	l, ok := inner.(Locker)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return l.Lock(ctx, key)
}
