package blob

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Copier is implemented by stores that copy an object on the server, its
// data never passing through the client (S3 CopyObject, GCS rewrite, Azure
// Copy Blob).
//
// Copy creates dst with the content of the object src, provided that src's
// version is still srcVersion (one from Get, Stat, Put or List of src) and
// that dst does not exist; the server checks both conditions atomically
// with the copy. The copy gets a new Version, which Copy returns with dst's
// Info. It returns an error wrapping ErrNotExist when src is missing, and
// ErrPrecondition when src's version differs or dst exists (the server may
// not say which); it changes nothing on error. A store whose server does
// not enforce both conditions, and a wrapper whose inner store lacks the
// capability (or must not forward it, like an encrypting store, whose
// ciphertext is bound to its key), return an error wrapping
// errors.ErrUnsupported, which makes the package function Copy fall back.
type Copier interface {
	Copy(ctx context.Context, src, dst, srcVersion string) (Info, error)
}

// Copy copies the object src to the new key dst and returns the source as
// copied (from: its key and the version whose content dst now holds) and
// the new object (to). srcVersion is the version of src the caller last
// saw, or "" for none.
//
// If s implements Copier and srcVersion is not "", Copy calls it; from is
// then src at srcVersion. Otherwise, or when the Copier returns
// errors.ErrUnsupported or ErrPrecondition (which may mean that src
// changed), Copy reads src with Get and writes dst with Put(IfAbsent): from
// is src as read. Either way dst is created only when it did not exist: the
// error wraps ErrPrecondition when it existed, ErrNotExist when src is
// missing, and nothing is changed on error.
func Copy(ctx context.Context, s Store, src, dst, srcVersion string) (from, to Info, err error) {
	if err := CheckKey(src); err != nil {
		return Info{}, Info{}, err
	}
	if err := CheckKey(dst); err != nil {
		return Info{}, Info{}, err
	}
	if c, ok := s.(Copier); ok && srcVersion != "" {
		to, err := c.Copy(ctx, src, dst, srcVersion)
		switch {
		case err == nil:
			return Info{Key: src, Size: to.Size, Version: srcVersion}, to, nil
		case !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, ErrPrecondition):
			return Info{}, Info{}, err
		}
	}
	data, from, err := s.Get(ctx, src, MaxObjectBytes)
	if err != nil {
		return Info{}, Info{}, err
	}
	to, err = s.Put(ctx, dst, data, Cond{IfAbsent: true})
	if err != nil {
		return Info{}, Info{}, err
	}
	return from, to, nil
}

// VersionDeleter is implemented by stores that delete many objects, each
// only if it is still at a given version, in fewer requests than one
// conditional Delete each (S3: one listing and DeleteObjects batches).
//
// DeleteVersions deletes each object infos[i].Key whose version is still
// infos[i].Version and returns one error for each element of infos, all
// nil on success: errs[i] wraps ErrPrecondition when the object's version
// differs (it is kept), ErrNotExist or ErrPrecondition when it is missing
// (as Delete(IfVersion) reports a missing key), and another error when the
// store failed. The second result concerns the whole call; when it
// is not nil the first is nil and nothing was deleted. A wrapper whose inner
// store lacks the capability returns (nil, an error wrapping
// errors.ErrUnsupported). A store documents how atomic each check is with
// its delete.
type VersionDeleter interface {
	DeleteVersions(ctx context.Context, infos []Info) ([]error, error)
}

// DeleteVersions deletes each object of infos whose version is still
// infos[i].Version, with the per-element errors documented on
// VersionDeleter. The second result is an error that concerns the whole
// call (an invalid key, a done ctx before anything started); when it is
// not nil the first is nil and nothing was deleted.
//
// If s implements VersionDeleter, DeleteVersions calls it; otherwise (or
// when it returns errors.ErrUnsupported) it calls s.Delete(key,
// Cond{IfVersion: version}) for each element, at most DeleteParallel at
// once. Once ctx is done it starts no more deletes; the elements not
// started get ctx's error. It is safe for concurrent use when s is.
func DeleteVersions(ctx context.Context, s Store, infos []Info) ([]error, error) {
	for _, info := range infos {
		if err := CheckKey(info.Key); err != nil {
			return nil, err
		}
		if info.Version == "" {
			return nil, fmt.Errorf("blob: %q: %w: no version to delete at", info.Key, ErrInvalidKey)
		}
	}
	if len(infos) == 0 {
		return []error{}, nil
	}
	if d, ok := s.(VersionDeleter); ok {
		errs, err := d.DeleteVersions(ctx, infos)
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
			errs[i] = s.Delete(ctx, info.Key, Cond{IfVersion: info.Version})
		}()
	}
	wg.Wait()
	return errs, nil
}

// The wrappers of this package forward Copier and VersionDeleter, as they
// forward BatchDeleter: each answers errors.ErrUnsupported when the store
// it wraps lacks them, so that the package functions fall back.
var (
	_ Copier         = (*timeoutStore)(nil)
	_ Copier         = (*prefixStore)(nil)
	_ Copier         = (*plainStore)(nil)
	_ Copier         = (*Counter)(nil)
	_ VersionDeleter = (*timeoutStore)(nil)
	_ VersionDeleter = (*prefixStore)(nil)
	_ VersionDeleter = (*plainStore)(nil)
	_ VersionDeleter = (*Counter)(nil)
)

// Copy forwards to the inner store's Copier under one deadline.
func (t *timeoutStore) Copy(ctx context.Context, src, dst, srcVersion string) (Info, error) {
	c, ok := t.inner.(Copier)
	if !ok {
		return Info{}, errors.ErrUnsupported
	}
	cctx, end := t.start(ctx, "copy", src)
	info, err := c.Copy(cctx, src, dst, srcVersion)
	return info, end(err)
}

// DeleteVersions forwards to the inner store's VersionDeleter
// DeleteParallel*BatchKeys objects at a time (what one listing and one
// round of parallel batch requests cover), each call under its own
// deadline. A call that fails as a whole fails the objects it was given;
// the calls after it still run. When the first call fails as a whole,
// nothing was deleted, and its error is returned alone (so that
// errors.ErrUnsupported makes blob.DeleteVersions fall back); a later part
// the inner store declines with errors.ErrUnsupported is deleted one
// object at a time.
func (t *timeoutStore) DeleteVersions(ctx context.Context, infos []Info) ([]error, error) {
	d, ok := t.inner.(VersionDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	const chunk = DeleteParallel * BatchKeys
	errs := make([]error, 0, len(infos))
	for first := 0; first < len(infos); first += chunk {
		part := infos[first:min(len(infos), first+chunk)]
		cctx, end := t.start(ctx, "deleteversions", part[0].Key)
		got, err := d.DeleteVersions(cctx, part)
		for i := range got {
			got[i] = end(got[i])
		}
		err = end(err)
		if first > 0 && errors.Is(err, errors.ErrUnsupported) {
			// The inner store declines this part (S3 declines a few keys,
			// or keys of several directories): the package function's
			// fallback deletes it one object at a time through t, each
			// Delete under its own deadline.
			got, err = DeleteVersions(ctx, coreCalls{t}, part)
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

// Copy forwards to the inner store's Copier with the prefix added to both
// keys.
func (p *prefixStore) Copy(ctx context.Context, src, dst, srcVersion string) (Info, error) {
	c, ok := p.inner.(Copier)
	if !ok {
		return Info{}, errors.ErrUnsupported
	}
	s, err := p.full(src)
	if err != nil {
		return Info{}, err
	}
	d, err := p.full(dst)
	if err != nil {
		return Info{}, err
	}
	info, err := c.Copy(ctx, s, d, srcVersion)
	return p.strip(info), err
}

// DeleteVersions forwards to the inner store's VersionDeleter with the
// prefix added to every key.
func (p *prefixStore) DeleteVersions(ctx context.Context, infos []Info) ([]error, error) {
	d, ok := p.inner.(VersionDeleter)
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
	return d.DeleteVersions(ctx, full)
}

// Copy forwards to the inner store's Copier, like DeleteTree: the store is
// not encrypted, so the copy is of plain text.
func (p *plainStore) Copy(ctx context.Context, src, dst, srcVersion string) (Info, error) {
	if err := p.check(ctx); err != nil {
		return Info{}, err
	}
	c, ok := p.inner.(Copier)
	if !ok {
		return Info{}, errors.ErrUnsupported
	}
	return c.Copy(ctx, src, dst, srcVersion)
}

// DeleteVersions forwards to the inner store's VersionDeleter, like
// DeleteTree.
func (p *plainStore) DeleteVersions(ctx context.Context, infos []Info) ([]error, error) {
	if err := p.check(ctx); err != nil {
		return nil, err
	}
	d, ok := p.inner.(VersionDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return d.DeleteVersions(ctx, infos)
}

// Copy forwards to the inner store's Copier and counts a call that reached
// storage.
func (c *Counter) Copy(ctx context.Context, src, dst, srcVersion string) (Info, error) {
	cp, ok := c.inner.(Copier)
	if !ok {
		return Info{}, errors.ErrUnsupported
	}
	info, err := cp.Copy(ctx, src, dst, srcVersion)
	if !errors.Is(err, errors.ErrUnsupported) {
		c.copy.Add(1)
	}
	return info, err
}

// DeleteVersions forwards to the inner store's VersionDeleter and counts a
// call that reached storage.
func (c *Counter) DeleteVersions(ctx context.Context, infos []Info) ([]error, error) {
	d, ok := c.inner.(VersionDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	errs, err := d.DeleteVersions(ctx, infos)
	if !errors.Is(err, errors.ErrUnsupported) {
		c.deleteVersions.Add(1)
	}
	return errs, err
}
