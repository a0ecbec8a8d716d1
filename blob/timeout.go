package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"
)

// DefaultTimeout is the deadline of one storage call of a network backend
// whose Options leave Timeout zero.
const DefaultTimeout = 30 * time.Second

// ErrTimeout means a storage call did not finish within its store's
// per-call deadline (see WithTimeout). The error is a *TimeoutError.
var ErrTimeout = errors.New("blob: storage call timed out")

// TimeoutError is the error of a call cut off by WithTimeout's deadline.
// errors.Is(err, ErrTimeout) and errors.Is(err, context.DeadlineExceeded)
// are true for it, and Unwrap reaches the backend's own error.
type TimeoutError struct {
	Op    string        // the call: "get", "stat", "put", "delete", "list", "rename", "deletetree"
	Key   string        // its key, prefix or source, as the caller named it
	After time.Duration // the deadline that elapsed
	Err   error         // what the backend returned when its context expired
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("blob: %s %q: no answer from storage within %v: %v", e.Op, e.Key, e.After, e.Err)
}

// Unwrap returns the backend's error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Is reports whether target is ErrTimeout or context.DeadlineExceeded.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// ModelCause is the short cause the memory handler shows the model after
// "The memory storage failed: ".
func (e *TimeoutError) ModelCause() string {
	return "the storage call timed out after " + e.After.String()
}

// WithTimeout returns s with a deadline on every call: each Get, Stat, Put,
// Delete, Rename and DeleteTree runs with a context that expires d after the
// call starts (d <= 0 means DefaultTimeout), and a List with one that expires d
// after the iteration starts, covering every page. A call that fails because
// that deadline passed, rather than because the caller's own context ended,
// returns a *TimeoutError. A call is cut off on the client side: a write the
// server received before the deadline may still have been applied, as after
// any lost answer; a server that never answers has applied nothing.
//
// The store forwards Tree, TraitsReporter and io.Closer to s (returning errors.ErrUnsupported for a
// capability s lacks, so that Rename and DeleteTree fall back), and is safe
// for concurrent use when s is. Backends apply it in their Open; Unwrap
// returns s.
func WithTimeout(s Store, d time.Duration) Store {
	if d <= 0 {
		d = DefaultTimeout
	}
	return &timeoutStore{inner: s, d: d}
}

// Unwrap returns the store that a WithTimeout store wraps, and s itself for
// any other store.
func Unwrap(s Store) Store {
	if t, ok := s.(*timeoutStore); ok {
		return t.inner
	}
	return s
}

type timeoutStore struct {
	inner Store
	d     time.Duration
}

var (
	_ Tree      = (*timeoutStore)(nil)
	_ io.Closer = (*timeoutStore)(nil)
)

// start returns the call's context and the function that ends the call and
// turns an error caused by the deadline into a *TimeoutError.
func (t *timeoutStore) start(ctx context.Context, op, key string) (context.Context, func(error) error) {
	cctx, cancel := context.WithTimeout(ctx, t.d)
	return cctx, func(err error) error {
		// DeadlineExceeded, not Canceled: end may run more than once, and
		// after the first, cancel has ended cctx.
		expired := errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err != nil && expired {
			return &TimeoutError{Op: op, Key: key, After: t.d, Err: err}
		}
		return err
	}
}

func (t *timeoutStore) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	cctx, end := t.start(ctx, "get", key)
	data, info, err := t.inner.Get(cctx, key, limit)
	return data, info, end(err)
}

func (t *timeoutStore) Stat(ctx context.Context, key string) (Info, error) {
	cctx, end := t.start(ctx, "stat", key)
	info, err := t.inner.Stat(cctx, key)
	return info, end(err)
}

func (t *timeoutStore) Put(ctx context.Context, key string, data []byte, c Cond) (Info, error) {
	cctx, end := t.start(ctx, "put", key)
	info, err := t.inner.Put(cctx, key, data, c)
	return info, end(err)
}

func (t *timeoutStore) Delete(ctx context.Context, key string, c Cond) error {
	cctx, end := t.start(ctx, "delete", key)
	return end(t.inner.Delete(cctx, key, c))
}

func (t *timeoutStore) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		cctx, end := t.start(ctx, "list", prefix)
		defer func() { _ = end(nil) }()
		for info, err := range t.inner.List(cctx, prefix) {
			if err != nil {
				yield(Info{}, end(err))
				return
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

func (t *timeoutStore) Rename(ctx context.Context, src, dst string) error {
	r, ok := t.inner.(Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	cctx, end := t.start(ctx, "rename", src)
	return end(r.Rename(cctx, src, dst))
}

func (t *timeoutStore) DeleteTree(ctx context.Context, dir string) error {
	d, ok := t.inner.(Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	cctx, end := t.start(ctx, "deletetree", dir)
	return end(d.DeleteTree(cctx, dir))
}

func (t *timeoutStore) Close() error { return Close(t.inner) }
