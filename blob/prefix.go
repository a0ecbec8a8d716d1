package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
)

// Prefix returns a Store that sees only the keys of s under the directory
// prefix: key k of the returned store is key prefix+"/"+k of s. It is meant
// for scoping one store per user or agent. prefix must be a valid key.
//
// The returned store forwards Tree, TraitsReporter and
// io.Closer to s
// and is safe for concurrent use when s is.
func Prefix(s Store, prefix string) (Store, error) {
	prefix = strings.Trim(prefix, "/")
	if err := CheckKey(prefix); err != nil {
		return nil, fmt.Errorf("blob: prefix: %w", err)
	}
	return &prefixStore{inner: s, dir: prefix + "/"}, nil
}

type prefixStore struct {
	inner Store
	dir   string // the prefix, with a trailing '/'
}

var (
	_ Tree      = (*prefixStore)(nil)
	_ io.Closer = (*prefixStore)(nil)
)

// full maps a key of this store to a key of the inner store, checking it
// first so that nothing outside the prefix is ever reachable.
func (p *prefixStore) full(key string) (string, error) {
	if err := CheckKey(key); err != nil {
		return "", err
	}
	if len(p.dir)+len(key) > MaxKeyLen {
		return "", fmt.Errorf("%w: %d bytes with the store prefix, over %d", ErrInvalidKey, len(p.dir)+len(key), MaxKeyLen)
	}
	return p.dir + key, nil
}

func (p *prefixStore) strip(info Info) Info {
	info.Key = strings.TrimPrefix(info.Key, p.dir)
	return info
}

func (p *prefixStore) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	k, err := p.full(key)
	if err != nil {
		return nil, Info{}, err
	}
	data, info, err := p.inner.Get(ctx, k, limit)
	if tl, ok := errors.AsType[*TooLargeError](err); ok {
		// The caller's key, not the inner store's.
		err = &TooLargeError{Key: key, Size: tl.Size, Limit: tl.Limit}
	}
	return data, p.strip(info), err
}

func (p *prefixStore) Stat(ctx context.Context, key string) (Info, error) {
	k, err := p.full(key)
	if err != nil {
		return Info{}, err
	}
	info, err := p.inner.Stat(ctx, k)
	return p.strip(info), err
}

func (p *prefixStore) Put(ctx context.Context, key string, data []byte, c Cond) (Info, error) {
	k, err := p.full(key)
	if err != nil {
		return Info{}, err
	}
	info, err := p.inner.Put(ctx, k, data, c)
	return p.strip(info), err
}

func (p *prefixStore) Delete(ctx context.Context, key string, c Cond) error {
	k, err := p.full(key)
	if err != nil {
		return err
	}
	return p.inner.Delete(ctx, k, c)
}

func (p *prefixStore) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		if err := CheckPrefix(prefix); err != nil {
			yield(Info{}, err)
			return
		}
		for info, err := range p.inner.List(ctx, p.dir+prefix) {
			if !yield(p.strip(info), err) || err != nil {
				return
			}
		}
	}
}

func (p *prefixStore) Rename(ctx context.Context, src, dst string) error {
	r, ok := p.inner.(Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	from, err := p.full(src)
	if err != nil {
		return err
	}
	to, err := p.full(dst)
	if err != nil {
		return err
	}
	return r.Rename(ctx, from, to)
}

func (p *prefixStore) DeleteTree(ctx context.Context, dir string) error {
	d, ok := p.inner.(Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	k, err := p.full(dir)
	if err != nil {
		return err
	}
	return d.DeleteTree(ctx, k)
}

// Close closes the inner store.
func (p *prefixStore) Close() error { return Close(p.inner) }

// ReadOnly returns a Store that serves reads from s and refuses every write
// (Put, Delete, Rename, DeleteTree) with an error wrapping ErrReadOnly,
// without calling s. It reports ReadOnly() == true and is safe for concurrent
// use when s is.
func ReadOnly(s Store) Store { return readOnlyStore{inner: s} }

type readOnlyStore struct{ inner Store }

var (
	_ Tree      = readOnlyStore{}
	_ io.Closer = readOnlyStore{}
)

func (r readOnlyStore) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	return r.inner.Get(ctx, key, limit)
}

func (r readOnlyStore) Stat(ctx context.Context, key string) (Info, error) {
	return r.inner.Stat(ctx, key)
}

func (r readOnlyStore) Put(context.Context, string, []byte, Cond) (Info, error) {
	return Info{}, ErrReadOnly
}

func (r readOnlyStore) Delete(context.Context, string, Cond) error { return ErrReadOnly }

func (r readOnlyStore) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	return r.inner.List(ctx, prefix)
}

func (r readOnlyStore) Rename(context.Context, string, string) error { return ErrReadOnly }

func (r readOnlyStore) DeleteTree(context.Context, string) error { return ErrReadOnly }

// Close closes the inner store: closing is not a write.
func (r readOnlyStore) Close() error { return Close(r.inner) }
