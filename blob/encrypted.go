package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
)

// ErrEncrypted is the error of every call to a store made by
// RefuseEncrypted over a store that holds the encryption layer's key object
// (EncryptionKeyName). Its text is meant for people and models alike, and
// it is a memory.Causer: the model reads it as the cause.
var ErrEncrypted error = encryptedError{}

type encryptedError struct{}

func (encryptedError) Error() string      { return "this store is encrypted; open it with encrypt=age" }
func (encryptedError) ModelCause() string { return "this store is encrypted; open it with encrypt=age" }

// RefuseEncrypted returns a Store for opening s without encryption: one that
// refuses to work on an encrypted store, so that plaintext is never written
// into it and ciphertext never read back as if it were content. The first
// call checks, with one Stat of EncryptionKeyName, whether s holds the key
// object; if it does, that call and every later one (Get, Stat, Put,
// Delete, List, Rename, DeleteTree) return ErrEncrypted without touching
// s; if it does not, every call is forwarded to s. A failed check is not
// remembered: the call returns its error and the next call checks again.
//
// The answer is remembered for the life of the returned store. A store that
// becomes encrypted afterwards is not noticed until it is opened again; the
// encryption layer only creates its key object in a store that holds no
// other object, so an unnoticed encryption leaves nothing of it readable as
// plaintext.
//
// The returned store forwards Tree, Locker, TraitsReporter and io.Closer to s, and is safe for concurrent
// use when s is.
func RefuseEncrypted(s Store) Store { return &plainStore{inner: s} }

type plainStore struct {
	inner Store

	mu      sync.Mutex
	checked bool // the key object was looked for
	found   bool // and found
}

var (
	_ Tree      = (*plainStore)(nil)
	_ io.Closer = (*plainStore)(nil)
)

// check returns ErrEncrypted when the inner store is encrypted, looking
// once.
func (p *plainStore) check(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.checked {
		_, err := p.inner.Stat(ctx, EncryptionKeyName)
		switch {
		case err == nil:
			p.found = true
		case !errors.Is(err, ErrNotExist):
			return fmt.Errorf("blob: looking for the encryption key object: %w", err)
		}
		p.checked = true
	}
	if p.found {
		return ErrEncrypted
	}
	return nil
}

func (p *plainStore) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	if err := p.check(ctx); err != nil {
		return nil, Info{}, err
	}
	return p.inner.Get(ctx, key, limit)
}

func (p *plainStore) Stat(ctx context.Context, key string) (Info, error) {
	if err := p.check(ctx); err != nil {
		return Info{}, err
	}
	return p.inner.Stat(ctx, key)
}

func (p *plainStore) Put(ctx context.Context, key string, data []byte, c Cond) (Info, error) {
	if err := p.check(ctx); err != nil {
		return Info{}, err
	}
	return p.inner.Put(ctx, key, data, c)
}

func (p *plainStore) Delete(ctx context.Context, key string, c Cond) error {
	if err := p.check(ctx); err != nil {
		return err
	}
	return p.inner.Delete(ctx, key, c)
}

func (p *plainStore) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		if err := p.check(ctx); err != nil {
			yield(Info{}, err)
			return
		}
		for info, err := range p.inner.List(ctx, prefix) {
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}

// Rename forwards to the inner store's Tree, or returns
// errors.ErrUnsupported (after the check) so that the package function
// Rename falls back through this store.
func (p *plainStore) Rename(ctx context.Context, src, dst string) error {
	if err := p.check(ctx); err != nil {
		return err
	}
	r, ok := p.inner.(Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	return r.Rename(ctx, src, dst)
}

// DeleteTree forwards to the inner store's Tree, like Rename.
func (p *plainStore) DeleteTree(ctx context.Context, dir string) error {
	if err := p.check(ctx); err != nil {
		return err
	}
	d, ok := p.inner.(Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	return d.DeleteTree(ctx, dir)
}

// Close closes the inner store.
func (p *plainStore) Close() error { return Close(p.inner) }

var ()

// Unguarded returns the store RefuseEncrypted wrapped when s is such a
// guard (the outermost layer of s), and s itself otherwise. It is for the
// rare program that must reach an encrypted store's raw objects without
// decrypting them, such as re-encryption (crypt.Rekey); everything else that
// opens a store without encryption keeps the guard.
func Unguarded(s Store) Store {
	if p, ok := s.(*plainStore); ok {
		return p.inner
	}
	return s
}
