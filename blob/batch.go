package blob

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// BatchDeleter is implemented by stores that delete many objects in fewer
// requests than one Delete each (S3's DeleteObjects, up to 1,000 keys a
// request).
//
// DeleteBatch deletes each object infos[i].Key: unconditionally when
// infos[i].Version is "", otherwise only if its version is still
// infos[i].Version. It returns one error for each element of infos, all
// nil on success. For an unconditional element a missing key is no error,
// and its error never wraps ErrNotExist or ErrPrecondition. For a
// conditional one, the error wraps ErrPrecondition when the object's
// version differs (it is kept), ErrNotExist or ErrPrecondition when it is
// missing (as Delete(IfVersion) reports a missing key), and another error
// when the store failed. The second result concerns the whole call; when
// it is not nil the first is nil and nothing was deleted. A store
// documents how atomic each check is with its delete. A store that serves
// only some batches (too few keys, or a mix of conditional and
// unconditional elements), and a wrapper whose inner store lacks the
// capability, return (nil, an error wrapping errors.ErrUnsupported).
type BatchDeleter interface {
	DeleteBatch(ctx context.Context, infos []Info) ([]error, error)
}

// DeleteParallel bounds how many Delete calls DeleteBatch's fallback has in
// flight at once: enough to hide most of a remote store's round-trip
// latency, few enough to stay within its client's connection pool and a
// server's request rates.
const DeleteParallel = 16

// BatchKeys is the most keys one batch request names (S3's DeleteObjects
// limit). WithTimeout hands a BatchDeleter DeleteParallel*BatchKeys
// objects per call (one round of parallel requests), each call under its
// own deadline.
const BatchKeys = 1000

// DeleteBatch deletes each object of infos, unconditionally or at its
// version, with the per-element errors documented on BatchDeleter. The
// second result is an error that concerns the whole call (an invalid key);
// when it is not nil the first is nil and nothing was deleted.
//
// If s implements BatchDeleter, DeleteBatch calls it; otherwise (or when it
// returns errors.ErrUnsupported) it calls s.Delete(key, Cond{IfVersion:
// version}) for each element, at most DeleteParallel at once. Once ctx is
// done it starts no more deletes; the elements not started get ctx's
// error. It is safe for concurrent use when s is.
func DeleteBatch(ctx context.Context, s Store, infos []Info) ([]error, error) {
	for _, info := range infos {
		if err := CheckKey(info.Key); err != nil {
			return nil, err
		}
	}
	if len(infos) == 0 {
		return []error{}, nil
	}
	if d, ok := s.(BatchDeleter); ok {
		errs, err := d.DeleteBatch(ctx, infos)
		if !errors.Is(err, errors.ErrUnsupported) {
			return errs, err
		}
	}
	var (
		wg   sync.WaitGroup
		errs = make([]error, len(infos))
		sem  = make(chan struct{}, DeleteParallel)
	)
	for i, info := range infos {
		sem <- struct{}{}
		if err := ctx.Err(); err != nil {
			<-sem
			errs[i] = err
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := s.Delete(ctx, info.Key, Cond{IfVersion: info.Version})
			if info.Version == "" && err != nil {
				if errors.Is(err, ErrNotExist) {
					err = nil
				} else {
					err = fmt.Errorf("deleting %q: %w", info.Key, noCondition(err))
				}
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return errs, nil
}

// DeleteKeys deletes each of keys unconditionally with DeleteBatch and
// returns the elements' errors joined in the order of keys, ctx's error
// once: a key that does not exist is no error, and the error never wraps
// ErrNotExist or ErrPrecondition. After an error some of the keys may be
// gone; the rest are intact.
func DeleteKeys(ctx context.Context, s Store, keys []string) error {
	infos := make([]Info, len(keys))
	for i, key := range keys {
		infos[i] = Info{Key: key}
	}
	errs, err := DeleteBatch(ctx, s, infos)
	if err != nil {
		return err
	}
	stopped, once := ctx.Err(), false
	var joined []error
	for _, err := range errs {
		if err == nil || stopped != nil && err == stopped && once {
			continue
		}
		once = once || stopped != nil && err == stopped
		joined = append(joined, err)
	}
	return errors.Join(joined...)
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
// Tree: each answers errors.ErrUnsupported when the store it wraps
// lacks it, so that the package function DeleteBatch falls back.
var (
	_ BatchDeleter = (*timeoutStore)(nil)
	_ BatchDeleter = (*prefixStore)(nil)
	_ BatchDeleter = (*plainStore)(nil)
	_ BatchDeleter = (*Counter)(nil)
)

// DeleteBatch forwards to the inner store's BatchDeleter
// DeleteParallel*BatchKeys objects at a time (what one listing and one
// round of parallel batch requests cover), each call under its own
// deadline. A call that fails as a whole fails the objects it was given;
// the calls after it still run. When the first call fails as a whole,
// nothing was deleted, and its error is returned alone (so that
// errors.ErrUnsupported makes blob.DeleteBatch fall back); a later part
// the inner store declines with errors.ErrUnsupported is deleted one
// object at a time.
func (t *timeoutStore) DeleteBatch(ctx context.Context, infos []Info) ([]error, error) {
	d, ok := t.inner.(BatchDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	const chunk = DeleteParallel * BatchKeys
	errs := make([]error, 0, len(infos))
	for first := 0; first < len(infos); first += chunk {
		part := infos[first:min(len(infos), first+chunk)]
		cctx, end := t.start(ctx, "deletebatch", part[0].Key)
		got, err := d.DeleteBatch(cctx, part)
		for i := range got {
			got[i] = end(got[i])
		}
		err = end(err)
		if first > 0 && errors.Is(err, errors.ErrUnsupported) {
			// The inner store declines this part (S3 declines a few keys,
			// or keys of several directories): the package function's
			// fallback deletes it one object at a time through t, each
			// Delete under its own deadline.
			got, err = DeleteBatch(ctx, coreCalls{t}, part)
		}
		if err != nil {
			if first == 0 {
				return nil, err
			}
			got = make([]error, len(part))
			for i := range got {
				got[i] = err
			}
		}
		errs = append(errs, got...)
	}
	return errs, nil
}

// coreCalls is a store with the five core calls of the store it wraps and
// none of its capabilities.
type coreCalls struct{ Store }

// DeleteBatch forwards to the inner store's BatchDeleter with the prefix
// added to every key.
func (p *prefixStore) DeleteBatch(ctx context.Context, infos []Info) ([]error, error) {
	d, ok := p.inner.(BatchDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	full := make([]Info, len(infos))
	for i, info := range infos {
		k, err := p.full(info.Key)
		if err != nil {
			return nil, err
		}
		info.Key = k
		full[i] = info
	}
	return d.DeleteBatch(ctx, full)
}

// DeleteBatch forwards to the inner store's BatchDeleter, like DeleteTree.
func (p *plainStore) DeleteBatch(ctx context.Context, infos []Info) ([]error, error) {
	if err := p.check(ctx); err != nil {
		return nil, err
	}
	d, ok := p.inner.(BatchDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return d.DeleteBatch(ctx, infos)
}

// DeleteBatch forwards to the inner store's BatchDeleter and counts a call
// that reached storage.
func (c *Counter) DeleteBatch(ctx context.Context, infos []Info) ([]error, error) {
	d, ok := c.inner.(BatchDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	errs, err := d.DeleteBatch(ctx, infos)
	if !errors.Is(err, errors.ErrUnsupported) {
		c.deleteBatch.Add(1)
	}
	return errs, err
}
