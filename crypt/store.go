package crypt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync/atomic"

	"github.com/cloudmem/cloudmem/blob"
)

// Wrap returns a Store that encrypts every object it writes to inner with
// age, to all of cfg's recipients, and decrypts and verifies every object it
// reads with cfg's identities. It returns an error, and no store, when cfg
// fails Validate or inner is nil.
//
// Keys, versions and conditions pass through to inner unchanged, so the
// returned store makes exactly the guarantees inner makes about conditional
// writes and races. Sizes (in Info from Get, Stat, Put and List) are
// plaintext sizes; Stat and List compute them from the stored size without
// reading the object.
//
// Get returns an error wrapping ErrWrongKey, ErrCorrupt or ErrNotEncrypted
// (inside an *Error) for an object it cannot decrypt or verify, and then no
// data at all. Get and Put fail with ErrUntrustedKey (inside an *Error)
// while the store's integrity key object is not trusted: neither vouched
// for by one of cfg's identities nor of the pinned cfg.KeyFingerprint (see
// the package documentation). The key ".cloudmem/crypt-key" holds the
// store's integrity key:
// Get, Stat, Put and Delete refuse it with blob.ErrInvalidKey and List never
// yields it.
//
// The returned store forwards DeleteTree (of blob.Tree), BatchDeleter, Locker,
// TraitsReporter and io.Closer to inner. It
// deliberately does not forward Rename (answering errors.ErrUnsupported) or Copier: an atomic rename in inner would move
// ciphertext bound to the old key, which then fails its check at the new
// key, so Rename returns errors.ErrUnsupported and blob.Rename falls back to
// copying through this store (re-encrypting for each new key) and deleting
// the sources; for the same reason blob.Copy reads and writes through it.
//
// The store is safe for concurrent use when inner is. It loads the integrity
// key on first use and keeps it in memory. It also remembers the age file
// key of each object version it decrypted (up to 4096 of them, by a hash of
// the object's age header), so that reading the same version again costs no
// key agreement; every read still checks the whole object, and a
// changed or altered object misses the cache (see the package
// documentation).
func Wrap(inner blob.Store, cfg Config) (blob.Store, error) {
	if inner == nil {
		return nil, errors.New("crypt: nil store")
	}
	kr, err := cfg.compile(true, true)
	if err != nil {
		return nil, err
	}
	return &store{inner: inner, keys: kr, fileKeys: newFileKeyCache(fileKeyCacheSize), loading: make(chan struct{}, 1)}, nil
}

type store struct {
	inner    blob.Store
	keys     *keyring
	fileKeys *fileKeyCache // of the object versions read

	key     atomic.Pointer[storeKey] // the integrity key, once loaded
	loading chan struct{}            // a one-slot semaphore: one load at a time
}

// storeKey is a loaded (and trusted) integrity key.
type storeKey struct {
	mac []byte // the frame MAC key
	fp  string // the fingerprint of the secret
}

var (
	_ blob.Tree = (*store)(nil)
	_ io.Closer = (*store)(nil)
)

// macKey returns the store's frame MAC key, loading it on first use. When
// create is set, a missing key object is created (see loadMACKey). A failed
// load is not remembered: the next call tries again.
func (s *store) macKey(ctx context.Context, create bool) ([]byte, error) {
	if k := s.key.Load(); k != nil {
		return k.mac, nil
	}
	select {
	case s.loading <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-s.loading }()
	if k := s.key.Load(); k != nil {
		return k.mac, nil
	}
	mac, fp, err := loadMACKey(ctx, s.inner, s.keys, create)
	if err != nil {
		return nil, err
	}
	s.key.Store(&storeKey{mac: mac, fp: fp})
	return mac, nil
}

// checkKey refuses invalid keys and the key object before anything is
// touched.
func checkKey(key string) error {
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	if isKeyObject(key) {
		return fmt.Errorf("crypt: %q is reserved for the store's integrity key: %w", key, blob.ErrInvalidKey)
	}
	return nil
}

// isKeyObject reports whether key names the key object in any case of its
// letters, as blob.EqualFold compares them (the rule of every layer, which
// takes the Kelvin sign for k): a case-insensitive file system (macOS,
// Windows) keeps ".CLOUDMEM/crypt-key" at ".cloudmem/crypt-key".
func isKeyObject(key string) bool { return blob.EqualFold(key, keyObject) }

// size turns a stored Info into a plaintext one. A stored size that no
// plaintext size produces (see plaintextSize) is reported as 0.
func (s *store) size(info blob.Info) blob.Info {
	size, ok := plaintextSize(info.Size, len(info.Key), s.keys.kind.prelude())
	if !ok {
		size = 0
	}
	info.Size = size
	return info
}

// Get asks the inner store for at most the stored size of a limit-byte
// content (with the largest prelude, so an object of either kind fits) and
// checks the decrypted content against limit itself.
func (s *store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if err := checkKey(key); err != nil {
		return nil, blob.Info{}, err
	}
	if err := blob.CheckLimit(limit); err != nil {
		return nil, blob.Info{}, err
	}
	data, info, err := s.inner.Get(ctx, key, storedSize(limit, len(key), maxPrelude))
	if tl, ok := errors.AsType[*blob.TooLargeError](err); ok {
		size, ok := plaintextSize(tl.Size, len(key), s.keys.kind.prelude())
		if !ok {
			size = -1
		}
		return nil, blob.Info{}, &blob.TooLargeError{Key: key, Size: size, Limit: limit}
	}
	if err != nil {
		return nil, blob.Info{}, err
	}
	f, err := decrypt(s.keys.identities, s.fileKeys, key, data)
	if err != nil {
		return nil, blob.Info{}, err
	}
	mk, err := s.macKey(ctx, false)
	if err != nil {
		return nil, blob.Info{}, err
	}
	if err := f.verify(mk, key); err != nil {
		return nil, blob.Info{}, err
	}
	info.Size = int64(len(f.content))
	if err := blob.CheckSize(key, info.Size, limit); err != nil {
		return nil, blob.Info{}, err
	}
	return f.content, info, nil
}

func (s *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := checkKey(key); err != nil {
		return blob.Info{}, err
	}
	info, err := s.inner.Stat(ctx, key)
	if err != nil {
		return info, err
	}
	return s.size(info), nil
}

func (s *store) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if err := checkKey(key); err != nil {
		return blob.Info{}, err
	}
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	if err := ctx.Err(); err != nil {
		return blob.Info{}, err
	}
	mk, err := s.macKey(ctx, true)
	if err != nil {
		return blob.Info{}, err
	}
	ct, err := seal(s.keys, mk, key, data)
	if err != nil {
		return blob.Info{}, err
	}
	info, err := s.inner.Put(ctx, key, ct.data, c)
	if err != nil {
		return info, err
	}
	ct.remember(s.fileKeys) // reading it back needs no key agreement
	info.Size = int64(len(data))
	return info, nil
}

func (s *store) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := checkKey(key); err != nil {
		return err
	}
	return s.inner.Delete(ctx, key, c)
}

func (s *store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		for info, err := range s.inner.List(ctx, prefix) {
			if err != nil {
				yield(info, err)
				return
			}
			if info.Key == keyObject {
				continue
			}
			if !yield(s.size(info), nil) {
				return
			}
		}
	}
}

// Rename always returns errors.ErrUnsupported, so that blob.Rename copies
// through this store and re-encrypts each object for its new key. Forwarding
// inner's atomic rename would move frames bound to the old keys; the
// capability is dropped on purpose.
func (s *store) Rename(context.Context, string, string) error {
	return fmt.Errorf("crypt: an atomic rename would break the path binding: %w", errors.ErrUnsupported)
}

// DeleteTree forwards to inner's DeleteTree (deleting needs no plaintext).
// It returns errors.ErrUnsupported, so that blob.DeleteTree falls back
// through this store, when inner has none or when dir is ".cloudmem", whose
// tree holds the integrity key object this store must keep (in any case of
// its letters, as isKeyObject).
func (s *store) DeleteTree(ctx context.Context, dir string) error {
	d, ok := s.inner.(blob.Tree)
	if !ok || len(dir) < len(keyObject) && blob.EqualFold(keyObject[:len(dir)+1], dir+"/") {
		return errors.ErrUnsupported
	}
	return d.DeleteTree(ctx, dir)
}

// Close closes inner (see blob.Close).
func (s *store) Close() error { return blob.Close(s.inner) }
