package blob

import (
	"context"
	"errors"
)

var _ Locker = (*timeoutStore)(nil)

// Lock forwards to the inner store's Locker, bounded like any call: a lock
// not obtained within the timeout fails with a *TimeoutError. The lock, once
// held, is not bound to the timeout.
func (t *timeoutStore) Lock(ctx context.Context, key string) (func(), error) {
	l, ok := t.inner.(Locker)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	cctx, end := t.start(ctx, "lock", key)
	unlock, err := l.Lock(cctx, key)
	return unlock, end(err)
}
