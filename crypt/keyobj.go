package crypt

import (
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/blob"
)

// keyObject is the key of the bookkeeping object that holds the store's
// integrity secret. Its name is defined in blob, so that a store opened
// without encryption can recognise an encrypted one (blob.RefuseEncrypted)
// without importing this package.
const keyObject = blob.EncryptionKeyName

// secretLen is the size of the integrity secret.
const secretLen = 32

// macKeyFor derives the frame MAC key from the stored secret.
func macKeyFor(secret []byte) ([]byte, error) {
	return hkdf.Key(sha256.New, secret, nil, "cloudmem-age/v1 frame mac key", sha256.Size)
}

// maxKeyObjectSize bounds the read of the key object: its largest content
// with the largest prelude.
var maxKeyObjectSize = storedSize(secretLen+maxTags*tagLen, len(keyObject), maxPrelude)

// readKeyObj reads the key object and checks its frame. found is false
// (with a nil error) when it does not exist. Whether it can be trusted is
// for the caller to decide (see trust); the frame is returned for its key
// set.
func readKeyObj(ctx context.Context, inner blob.Store, ids []age.Identity) (k *keyObj, f *frame, info blob.Info, found bool, err error) {
	data, info, err := inner.Get(ctx, keyObject, maxKeyObjectSize)
	if errors.Is(err, blob.ErrNotExist) {
		return nil, nil, blob.Info{}, false, nil
	}
	if errors.Is(err, blob.ErrTooLarge) {
		return nil, nil, blob.Info{}, false, corrupt(keyObject, "the integrity key object has the wrong size", err)
	}
	if err != nil {
		return nil, nil, blob.Info{}, false, fmt.Errorf("crypt: reading the integrity key object: %w", err)
	}
	f, err = decrypt(ids, nil, keyObject, data)
	if err != nil {
		return nil, nil, blob.Info{}, false, err
	}
	k, err = openKeyFrame(f)
	if err != nil {
		return nil, nil, blob.Info{}, false, err
	}
	return k, f, info, true, nil
}

// openKeyFrame checks a decrypted key object frame and parses its content.
// The frame's MAC is keyed by the secret it holds: that catches damage, not
// forgery, which is what the tags and the pinned fingerprint are for (see
// trust).
func openKeyFrame(f *frame) (*keyObj, error) {
	k, err := parseKeyObj(f.content)
	if err != nil {
		return nil, err
	}
	mk, err := macKeyFor(k.secret)
	if err != nil {
		return nil, err
	}
	if err := f.verify(mk, keyObject); err != nil {
		return nil, err
	}
	return k, nil
}

// loadMACKey returns the frame MAC key of the store and the fingerprint of
// its secret, reading the key object and checking that it can be trusted
// (see trust), or, when create is set and the store holds no object yet,
// creating it with Put(IfAbsent). Of several processes racing to create it,
// one wins and the others read (and check) the winner's.
func loadMACKey(ctx context.Context, inner blob.Store, kr *keyring, create bool) (mac []byte, fp string, err error) {
	k, _, _, found, err := readKeyObj(ctx, inner, kr.identities)
	if err != nil {
		return nil, "", err
	}
	if !found && !create {
		return nil, "", corrupt(keyObject, "the store has no integrity key object", nil)
	}
	ours := false
	if !found {
		if k, ours, err = createKeyObj(ctx, inner, kr); err != nil {
			return nil, "", err
		}
	}
	if !ours {
		if err := trust(k, kr.identities, kr.pin); err != nil {
			return nil, "", err
		}
	}
	mac, err = macKeyFor(k.secret)
	return mac, fingerprint(k.secret), err
}

// createKeyObj creates the key object with a new secret, vouched for by
// every identity of kr that can vouch. ours is false when another process
// created it first and k is theirs, which the caller must still check.
func createKeyObj(ctx context.Context, inner blob.Store, kr *keyring) (k *keyObj, ours bool, err error) {
	// Minting a key for a store that already holds objects would make every
	// one of them fail its check: refuse, unless a rival created the key
	// (and wrote) since we looked.
	used, err := holdsObjects(ctx, inner)
	if err != nil {
		return nil, false, err
	}
	if used {
		k, _, _, found, err := readKeyObj(ctx, inner, kr.identities)
		if err != nil || found {
			return k, false, err
		}
		return nil, false, corrupt(keyObject, "the store holds objects but its integrity key object is missing", nil)
	}
	k = newKeyObj(kr)
	mk, err := macKeyFor(k.secret)
	if err != nil {
		return nil, false, err
	}
	if kr.pin != "" && fingerprint(k.secret) != kr.pin {
		// A pinned store that has no key object lost it, or was never
		// created with this configuration: a new key cannot match.
		return nil, false, untrusted("the store has no integrity key object, and a new one cannot have the pinned fingerprint " + kr.pin)
	}
	data, err := seal(kr, mk, keyObject, k.bytes())
	if err != nil {
		return nil, false, err
	}
	_, err = inner.Put(ctx, keyObject, data.data, blob.Cond{IfAbsent: true})
	if errors.Is(err, blob.ErrPrecondition) {
		// Another process won (or a retry of our own write landed twice,
		// which the check of its tags accepts): use what is stored.
		k, _, _, found, err := readKeyObj(ctx, inner, kr.identities)
		if err == nil && !found {
			err = corrupt(keyObject, "the integrity key object vanished while it was being created", nil)
		}
		return k, false, err
	}
	if err != nil {
		return nil, false, fmt.Errorf("crypt: creating the integrity key object: %w", err)
	}
	slog.DebugContext(ctx, "crypt: created the store's integrity key; pin it with age_key_fingerprint= (Config.KeyFingerprint) where other identities read the store",
		"fingerprint", fingerprint(k.secret))
	return k, true, nil
}

// newKeyObj returns a key object with a fresh secret, vouched for by kr's
// identities.
func newKeyObj(kr *keyring) *keyObj {
	k := &keyObj{secret: make([]byte, secretLen)}
	rand.Read(k.secret)
	k.vouch(kr.identities)
	return k
}

// holdsObjects reports whether inner has any key outside .cloudmem/.
func holdsObjects(ctx context.Context, inner blob.Store) (bool, error) {
	for info, err := range inner.List(ctx, "") {
		if err != nil {
			return false, fmt.Errorf("crypt: listing the store: %w", err)
		}
		if !strings.HasPrefix(info.Key, blob.ReservedName+"/") {
			return true, nil
		}
	}
	return false, nil
}
