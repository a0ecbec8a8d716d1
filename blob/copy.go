package blob

import (
	"context"
	"errors"
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

// The wrappers of this package forward Copier, as they forward
// BatchDeleter: each answers errors.ErrUnsupported when the store it wraps
// lacks it, so that the package function Copy falls back.
var (
	_ Copier = (*timeoutStore)(nil)
	_ Copier = (*prefixStore)(nil)
	_ Copier = (*plainStore)(nil)
	_ Copier = (*Counter)(nil)
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
