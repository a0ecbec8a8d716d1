package crypt

import (
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

// keyObject is the key of the bookkeeping object that holds the store's
// integrity secret. The top-level name ".cloudmem" is reserved for storage
// bookkeeping; the memory handler never exposes it.
const keyObject = ".cloudmem/crypt-key"

// secretLen is the size of the integrity secret.
const secretLen = 32

// macKeyFor derives the frame MAC key from the stored secret.
func macKeyFor(secret []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, nil, "cloudmem-age/v1 frame mac key", sha256.Size)
}

// readSecret reads and verifies the key object. found is false (with a nil
// error) when it does not exist.
func readSecret(ctx context.Context, inner blob.Store, kr *keyring) (secret []byte, found bool, err error) {
	data, _, err := inner.Get(ctx, keyObject, blob.MaxObjectBytes)
	if errors.Is(err, blob.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("crypt: reading the integrity key object: %w", err)
	}
	f, err := decrypt(kr.identities, keyObject, data)
	if err != nil {
		return nil, false, err
	}
	secret, err = openKeyFrame(f)
	return secret, err == nil, err
}

// openKeyFrame verifies a decrypted key object frame and returns the secret.
// The frame's MAC is keyed by the secret it holds: that catches damage, not
// forgery (see the package documentation).
func openKeyFrame(f *frame) ([]byte, error) {
	if len(f.content) != secretLen {
		return nil, corrupt(keyObject, "the integrity secret has the wrong size", nil)
	}
	mk, err := macKeyFor(f.content)
	if err != nil {
		return nil, err
	}
	if err := f.verify(mk, keyObject); err != nil {
		return nil, err
	}
	return f.content, nil
}

// loadMACKey returns the frame MAC key of the store, reading the key object,
// or, when create is set and the store holds no object yet, creating it with
// Put(IfAbsent). Of several processes racing to create it, one wins and the
// others read the winner's.
func loadMACKey(ctx context.Context, inner blob.Store, kr *keyring, create bool) ([]byte, error) {
	secret, found, err := readSecret(ctx, inner, kr)
	if err != nil {
		return nil, err
	}
	if !found && !create {
		return nil, corrupt(keyObject, "the store has no integrity key object", nil)
	}
	if !found {
		secret, err = createSecret(ctx, inner, kr)
		if err != nil {
			return nil, err
		}
	}
	return macKeyFor(secret)
}

func createSecret(ctx context.Context, inner blob.Store, kr *keyring) ([]byte, error) {
	// Minting a key for a store that already holds objects would make every
	// one of them fail its check: refuse, unless a rival created the key
	// (and wrote) since we looked.
	used, err := holdsObjects(ctx, inner)
	if err != nil {
		return nil, err
	}
	if used {
		secret, found, err := readSecret(ctx, inner, kr)
		if err != nil || found {
			return secret, err
		}
		return nil, corrupt(keyObject, "the store holds objects but its integrity key object is missing", nil)
	}
	secret := make([]byte, secretLen)
	rand.Read(secret)
	mk, err := macKeyFor(secret)
	if err != nil {
		return nil, err
	}
	data, err := seal(kr, mk, keyObject, secret)
	if err != nil {
		return nil, err
	}
	_, err = inner.Put(ctx, keyObject, data, blob.Cond{IfAbsent: true})
	if errors.Is(err, blob.ErrPrecondition) {
		// Another process won (or a retry of our own write landed twice):
		// use what is stored.
		secret, found, err := readSecret(ctx, inner, kr)
		if err == nil && !found {
			err = corrupt(keyObject, "the integrity key object vanished while it was being created", nil)
		}
		return secret, err
	}
	if err != nil {
		return nil, fmt.Errorf("crypt: creating the integrity key object: %w", err)
	}
	return secret, nil
}

// holdsObjects reports whether inner has any key outside .cloudmem/.
func holdsObjects(ctx context.Context, inner blob.Store) (bool, error) {
	for info, err := range inner.List(ctx, "") {
		if err != nil {
			return false, fmt.Errorf("crypt: listing the store: %w", err)
		}
		if !strings.HasPrefix(info.Key, ".cloudmem/") {
			return true, nil
		}
	}
	return false, nil
}
