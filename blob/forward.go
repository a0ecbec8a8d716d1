package blob

import (
	"context"
	"errors"
	"iter"
)

// Forward is the base of a wrapper that keeps keys as they are: it is a
// Store that forwards every call, every optional capability and Traits to
// Inner, and a capability Inner lacks answers errors.ErrUnsupported, which
// makes the package function (Rename, DeleteTree, DeleteBatch, ...) fall
// back through the wrapper. A wrapper embeds it and defines only the
// methods it changes, so a capability added to this package reaches every
// wrapper without a line of its own; blobtest's Forwarding check proves it
// for each. A wrapper that changes keys (Prefix, a mount table) must not
// embed it: a forwarded capability would reach the wrong keys.
//
// Forward is safe for concurrent use when Inner is.
type Forward struct {
	Inner Store
}

var (
	_ Store          = Forward{}
	_ Tree           = Forward{}
	_ Locker         = Forward{}
	_ Copier         = Forward{}
	_ BatchDeleter   = Forward{}
	_ TraitsReporter = Forward{}
)

func (f Forward) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	return f.Inner.Get(ctx, key, limit)
}

func (f Forward) Stat(ctx context.Context, key string) (Info, error) { return f.Inner.Stat(ctx, key) }

func (f Forward) Put(ctx context.Context, key string, data []byte, c Cond) (Info, error) {
	return f.Inner.Put(ctx, key, data, c)
}

func (f Forward) Delete(ctx context.Context, key string, c Cond) error {
	return f.Inner.Delete(ctx, key, c)
}

func (f Forward) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	return f.Inner.List(ctx, prefix)
}

// Traits are Inner's.
func (f Forward) Traits() Traits { return TraitsOf(f.Inner) }

func (f Forward) Rename(ctx context.Context, src, dst string) error {
	if r, ok := f.Inner.(Tree); ok {
		return r.Rename(ctx, src, dst)
	}
	return errors.ErrUnsupported
}

func (f Forward) DeleteTree(ctx context.Context, dir string) error {
	if d, ok := f.Inner.(Tree); ok {
		return d.DeleteTree(ctx, dir)
	}
	return errors.ErrUnsupported
}

func (f Forward) Lock(ctx context.Context, key string) (func(), error) {
	if l, ok := f.Inner.(Locker); ok {
		return l.Lock(ctx, key)
	}
	return nil, errors.ErrUnsupported
}

func (f Forward) Copy(ctx context.Context, src, dst, srcVersion string) (Info, error) {
	if c, ok := f.Inner.(Copier); ok {
		return c.Copy(ctx, src, dst, srcVersion)
	}
	return Info{}, errors.ErrUnsupported
}

func (f Forward) DeleteBatch(ctx context.Context, infos []Info) ([]error, error) {
	if b, ok := f.Inner.(BatchDeleter); ok {
		return b.DeleteBatch(ctx, infos)
	}
	return nil, errors.ErrUnsupported
}

// Close closes Inner (see Close).
func (f Forward) Close() error { return Close(f.Inner) }
