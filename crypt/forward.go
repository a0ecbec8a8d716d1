package crypt

import (
	"context"
	"errors"

	"github.com/cloudmem/cloudmem/blob"
)

var (
	_ blob.Locker = (*store)(nil)

	_ blob.BatchDeleter = (*store)(nil)
)

// Lock forwards to inner's Locker (keys are the same in both stores), or
// returns errors.ErrUnsupported so that blob.Lock falls back. The key
// object cannot be locked: blob.ErrInvalidKey.
func (s *store) Lock(ctx context.Context, key string) (func(), error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	l, ok := s.inner.(blob.Locker)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return l.Lock(ctx, key)
}

// Traits are inner's (keys pass through unchanged), and Encrypted.
func (s *store) Traits() blob.Traits {
	t := blob.TraitsOf(s.inner)
	t.Encrypted = true
	return t
}

// DeleteBatch forwards to inner's BatchDeleter (deleting needs no
// plaintext, keys pass through unchanged, and the versions this store
// reports are inner's), or returns errors.ErrUnsupported so that
// blob.DeleteBatch falls back through this store. The key object cannot be
// deleted: blob.ErrInvalidKey, and nothing is deleted.
func (s *store) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	for _, info := range infos {
		if err := checkKey(info.Key); err != nil {
			return nil, err
		}
	}
	d, ok := s.inner.(blob.BatchDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return d.DeleteBatch(ctx, infos)
}
