package crypt

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/blob"
)

// The integrity key object's content (see "The integrity key object" in
// the package documentation):
//
//	secret  32 bytes, random: the frame MAC key is derived from it
//	tags    0 to maxTags vouchers of 32 bytes each: HMAC-SHA256 over
//	        tagLabel and the secret, keyed with the tag key of one identity
//
// A key object of an earlier version holds the secret alone.
const (
	tagLen   = sha256.Size
	maxTags  = 16
	tagLabel = "cloudmem-age/v1 key object voucher\n"

	// tagKeyInfo labels the derivation of an identity's tag key from its
	// private key.
	tagKeyInfo = "cloudmem-age/v1 key object voucher key"
	// fingerprintLabel separates fingerprints from any other hash of the
	// secret.
	fingerprintLabel = "cloudmem-age/v1 key fingerprint\n"
	// fingerprintLen is the length of a fingerprint in hex digits.
	fingerprintLen = 32
)

// keyObj is the content of a decrypted integrity key object.
type keyObj struct {
	secret []byte
	tags   [][]byte
}

func parseKeyObj(content []byte) (*keyObj, error) {
	n := len(content) - secretLen
	if n < 0 || n%tagLen != 0 || n/tagLen > maxTags {
		return nil, corrupt(keyObject, "the integrity key object has the wrong size", nil)
	}
	k := &keyObj{secret: content[:secretLen]}
	for rest := content[secretLen:]; len(rest) > 0; rest = rest[tagLen:] {
		k.tags = append(k.tags, rest[:tagLen])
	}
	return k, nil
}

func (k *keyObj) bytes() []byte {
	return slices.Concat(append([][]byte{k.secret}, k.tags...)...)
}

// vouch adds the tags of those of ids that can make one (see tagKey) and
// do not have one yet, keeping at most maxTags (the newest). It reports
// whether a tag was added.
func (k *keyObj) vouch(ids []age.Identity) bool {
	added := false
	for _, id := range ids {
		tag, ok := tagFor(id, k.secret)
		if !ok || slices.ContainsFunc(k.tags, func(t []byte) bool { return hmac.Equal(t, tag) }) {
			continue
		}
		k.tags = append([][]byte{tag}, k.tags...)
		added = true
	}
	k.tags = k.tags[:min(len(k.tags), maxTags)]
	return added
}

// vouchedBy reports whether one of ids made one of k's tags.
func (k *keyObj) vouchedBy(ids []age.Identity) bool {
	for _, id := range ids {
		tag, ok := tagFor(id, k.secret)
		if ok && slices.ContainsFunc(k.tags, func(t []byte) bool { return hmac.Equal(t, tag) }) {
			return true
		}
	}
	return false
}

// tagFor returns the tag identity id puts on secret, or false for an
// identity whose private key this package cannot see (plugins, custom
// types): those can only trust a store by its pinned fingerprint.
func tagFor(id age.Identity, secret []byte) ([]byte, bool) {
	var private string
	switch id := id.(type) {
	case *age.X25519Identity:
		private = id.String()
	case *age.HybridIdentity:
		private = id.String()
	default:
		return nil, false
	}
	key, err := hkdf.Key(sha256.New, []byte(private), nil, tagKeyInfo, sha256.Size)
	if err != nil {
		return nil, false
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte(tagLabel))
	h.Write(secret)
	return h.Sum(nil), true
}

// fingerprint names a secret without revealing it: the first 16 bytes of
// SHA-256 over fingerprintLabel and the secret, in lowercase hex.
func fingerprint(secret []byte) string {
	sum := sha256.Sum256(slices.Concat([]byte(fingerprintLabel), secret))
	return hex.EncodeToString(sum[:fingerprintLen/2])
}

// checkFingerprint validates a Config's KeyFingerprint.
func checkFingerprint(fp string) error {
	if fp == "" {
		return nil
	}
	if len(fp) != fingerprintLen || strings.Trim(fp, "0123456789abcdef") != "" {
		return fmt.Errorf("crypt: the key fingerprint must be %d lowercase hex digits, as Fingerprint gives it", fingerprintLen)
	}
	return nil
}

// trust decides whether the key object k may be used: it must hold the
// pinned fingerprint when there is one, and otherwise carry the tag of one
// of ids. Its error wraps ErrUntrustedKey and names k's fingerprint, so an
// operator who checks it can pin it.
func trust(k *keyObj, ids []age.Identity, pin string) error {
	fp := fingerprint(k.secret)
	switch {
	case pin != "" && fp == pin:
		return nil
	case pin != "":
		return untrusted(fmt.Sprintf("its fingerprint %s is not the pinned %s (the key object was replaced)", fp, pin))
	case k.vouchedBy(ids):
		return nil
	}
	return untrusted(fmt.Sprintf("none of the configured identities made it: replaced or planted, or made by another identity "+
		"(after a rekey, say); if %s is the fingerprint your store's creator saw, pin it", fp))
}

// Fingerprint returns the fingerprint of the integrity key of s, which must
// be a store returned by Wrap: the value to pin in Config.KeyFingerprint
// (age_key_fingerprint= in a store URL). It loads the key as a read would,
// creating it on a store that holds no object yet, and so fails in the
// same ways (an untrusted key, a store error). A fingerprint names the key
// without revealing it: it may be printed and kept in configuration.
func Fingerprint(ctx context.Context, s blob.Store) (string, error) {
	cs, ok := s.(*store)
	if !ok {
		return "", fmt.Errorf("crypt: Fingerprint of a %T, not a store made by Wrap: %w", s, errors.ErrUnsupported)
	}
	if _, err := cs.macKey(ctx, true); err != nil {
		return "", err
	}
	return cs.key.Load().fp, nil
}
