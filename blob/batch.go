package blob

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// BatchDeleter is implemented by stores that delete many objects in few
// requests (S3's DeleteObjects, up to 1,000 keys a request).
//
// DeleteKeys deletes each of keys unconditionally. A key that does not exist
// is no error. After an error some of the keys may be gone; the rest are
// intact. The errors never wrap ErrNotExist or ErrPrecondition. A wrapper
// whose inner store lacks the capability returns an error wrapping
// errors.ErrUnsupported.
type BatchDeleter interface {
	DeleteKeys(ctx context.Context, keys []string) error
}

// DeleteParallel bounds how many Delete calls DeleteKeys's fallback has in
// flight at once: enough to hide most of a remote store's round-trip
// latency, few enough to stay within its client's connection pool and a
// server's request rates.
const DeleteParallel = 16

// DeleteKeys deletes each of keys, with the semantics and errors documented
// on BatchDeleter.
//
// If s implements BatchDeleter, DeleteKeys calls it; otherwise (or when it
// returns errors.ErrUnsupported) it calls s.Delete(key, Cond{}) for each key,
// at most DeleteParallel at once, makes them all even when some fail, and
// returns the failures joined in the order of keys. Once ctx is done it
// starts no more deletes and reports ctx's error. It is safe for concurrent
// use when s is.
func DeleteKeys(ctx context.Context, s Store, keys []string) error {
	for _, k := range keys {
		if err := CheckKey(k); err != nil {
			return err
		}
	}
	if len(keys) == 0 {
		return nil
	}
	if d, ok := s.(BatchDeleter); ok {
		err := d.DeleteKeys(ctx, keys)
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	var (
		wg      sync.WaitGroup
		errs    = make([]error, len(keys)+1)
		sem     = make(chan struct{}, DeleteParallel)
		stopped error
	)
	for i, key := range keys {
		sem <- struct{}{}
		if err := ctx.Err(); err != nil {
			<-sem
			stopped = err
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := s.Delete(ctx, key, Cond{})
			if err != nil && !errors.Is(err, ErrNotExist) {
				errs[i] = fmt.Errorf("deleting %q: %w", key, noCondition(err))
			}
		}()
	}
	wg.Wait()
	errs[len(keys)] = stopped
	return errors.Join(errs...)
}

// noCondition hides ErrPrecondition, which an unconditional Delete cannot
// mean, from callers that read it as a refused condition.
func noCondition(err error) error {
	if errors.Is(err, ErrPrecondition) {
		return fmt.Errorf("%v", err)
	}
	return err
}

// The wrappers of this package forward BatchDeleter, as they forward
// TreeDeleter: each answers errors.ErrUnsupported when the store it wraps
// lacks it, so that the package function DeleteKeys falls back.
var (
	_ BatchDeleter = (*timeoutStore)(nil)
	_ BatchDeleter = (*prefixStore)(nil)
	_ BatchDeleter = (*plainStore)(nil)
)

// BatchKeys is the most keys one batch request names (S3's DeleteObjects
// limit). WithTimeout hands a BatchDeleter this many keys per call, each
// call under its own deadline.
const BatchKeys = 1000

// DeleteKeys forwards to the inner store's BatchDeleter BatchKeys keys at a
// time, one after another, each call under its own deadline; it stops at
// the first call that fails.
func (t *timeoutStore) DeleteKeys(ctx context.Context, keys []string) error {
	d, ok := t.inner.(BatchDeleter)
	if !ok {
		return errors.ErrUnsupported
	}
	for len(keys) > 0 {
		batch := keys[:min(len(keys), BatchKeys)]
		keys = keys[len(batch):]
		cctx, end := t.start(ctx, "deletekeys", batch[0])
		if err := end(d.DeleteKeys(cctx, batch)); err != nil {
			return err
		}
	}
	return nil
}

// DeleteKeys forwards to the inner store's BatchDeleter with the prefix
// added to every key.
func (p *prefixStore) DeleteKeys(ctx context.Context, keys []string) error {
	d, ok := p.inner.(BatchDeleter)
	if !ok {
		return errors.ErrUnsupported
	}
	full := make([]string, len(keys))
	for i, key := range keys {
		k, err := p.full(key)
		if err != nil {
			return err
		}
		full[i] = k
	}
	return d.DeleteKeys(ctx, full)
}

// DeleteKeys forwards to the inner store's BatchDeleter, like DeleteTree.
func (p *plainStore) DeleteKeys(ctx context.Context, keys []string) error {
	if err := p.check(ctx); err != nil {
		return err
	}
	d, ok := p.inner.(BatchDeleter)
	if !ok {
		return errors.ErrUnsupported
	}
	return d.DeleteKeys(ctx, keys)
}
