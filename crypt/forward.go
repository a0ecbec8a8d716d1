package crypt

import (
	"context"
	"errors"

	"github.com/cloudmem/cloudmem/blob"
)

var (
	_ blob.Locker      = (*store)(nil)
	_ blob.KeyBudgeter = (*store)(nil)
	_ blob.Mounter     = (*store)(nil)
	_ blob.ListHider   = (*store)(nil)
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

// KeyBudget is inner's: keys pass through unchanged.
func (s *store) KeyBudget() int { return blob.KeyBytes(s.inner) }

// Mounts is inner's: keys pass through unchanged.
func (s *store) Mounts() []blob.MountPoint { return blob.Mounts(s.inner) }

// ListHidesUnderObjects is inner's: keys pass through unchanged.
func (s *store) ListHidesUnderObjects() bool { return blob.ListHidesUnderObjects(s.inner) }
