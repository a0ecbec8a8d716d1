package crypt

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// The encryption parameters (see "Shared parameters" in the package
// documentation).
const (
	paramEncrypt      = "encrypt"
	paramIdentityFile = "age_identity_file"
	paramRecipients   = "age_recipients"
	paramFingerprint  = "age_key_fingerprint"
)

// wrapperName is the name the encryption layer registers with storeurl.
const wrapperName = "encrypt"

// encryptParams are the shared query parameters that configure encryption.
// storeurl.Open removes them from the URL before the backend sees it, and
// calls encrypt when at least one of them is present.
var encryptParams = []string{paramEncrypt, paramIdentityFile, paramRecipients, paramFingerprint}

// This file hooks the encrypting store into package storeurl: a program
// that links package crypt (backends/all does) opens encrypted stores from
// URLs with encrypt=age; storeurl itself imports only blob, and no backend
// links age.
func init() {
	storeurl.RegisterWrapper(wrapperName, storeurl.Wrapper{Order: storeurl.OrderEncrypt, Params: encryptParams,
		Check: func(params url.Values) error {
			_, err := encryptConfig(params, os.Getenv)
			return err
		},
		Wrap: encrypt})
}

// encrypt is the storeurl hook: storeurl.Open calls it, when the URL holds any of
// encryptParams, with s (the backend's store, already scoped by prefix) and
// params (the encryption parameters present, each given exactly once). It
// returns s wrapped with crypt.Wrap, configured as encryptConfig says; Open
// then applies readonly on top. Its errors start with "crypt: " and
// contain no key material.
func encrypt(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
	cfg, err := encryptConfig(params, os.Getenv)
	if err != nil {
		return nil, err
	}
	return Wrap(s, cfg)
}

// encryptConfig turns the encryption parameters into a Config:
//
//   - encrypt must be "age", and must be given whenever another encryption
//     parameter is;
//   - the identities come from the file age_identity_file names, else from
//     the environment variable EnvIdentity (read with getenv), which
//     holds an identity file's content; a URL never holds a private key;
//   - the recipients are the comma-separated public keys of age_recipients,
//     else the public keys of the identities themselves;
//   - age_key_fingerprint, when given, pins the store's integrity key
//     (Config.KeyFingerprint): 32 lowercase hex digits, as Fingerprint
//     returns them.
func encryptConfig(params url.Values, getenv func(string) string) (Config, error) {
	if !params.Has(paramEncrypt) {
		for _, name := range encryptParams {
			if params.Has(name) {
				return Config{}, fmt.Errorf("crypt: %s needs encrypt=age", name)
			}
		}
	}
	if params.Get(paramEncrypt) != "age" {
		// The value is not repeated, in case a key was pasted there.
		return Config{}, errors.New("crypt: unknown encrypt value: the only encryption is encrypt=age")
	}

	var (
		ids []age.Identity
		err error
	)
	switch path := params.Get(paramIdentityFile); {
	case params.Has(paramIdentityFile) && path == "":
		return Config{}, fmt.Errorf("crypt: %s is empty", paramIdentityFile)
	case path != "":
		ids, err = LoadIdentities(path)
	case strings.TrimSpace(getenv(EnvIdentity)) != "":
		ids, err = ParseIdentities(getenv(EnvIdentity))
		if err != nil {
			err = fmt.Errorf("%w (in $%s)", err, EnvIdentity)
		}
	default:
		return Config{}, fmt.Errorf("crypt: encrypt=age needs an identity: %s=PATH, or the identity file's content in $%s",
			paramIdentityFile, EnvIdentity)
	}
	if err != nil {
		return Config{}, err
	}

	var recipients []age.Recipient
	if params.Has(paramRecipients) {
		keys := strings.Split(params.Get(paramRecipients), ",")
		for i, k := range keys {
			if strings.TrimSpace(k) == "" {
				return Config{}, fmt.Errorf("crypt: %s: recipient %d is empty", paramRecipients, i+1)
			}
		}
		if recipients, err = ParseRecipients(keys...); err != nil {
			return Config{}, fmt.Errorf("%w (in %s)", err, paramRecipients)
		}
	} else if recipients, err = ownRecipients(ids); err != nil {
		return Config{}, err
	}
	cfg := Config{Recipients: recipients, Identities: ids, KeyFingerprint: params.Get(paramFingerprint)}
	if params.Has(paramFingerprint) && cfg.KeyFingerprint == "" {
		return Config{}, fmt.Errorf("crypt: %s is empty", paramFingerprint)
	}
	if err := checkFingerprint(cfg.KeyFingerprint); err != nil {
		return Config{}, fmt.Errorf("%w (in %s)", err, paramFingerprint)
	}
	return cfg, nil
}

// ownRecipients returns the public key of each identity (once, should an
// identity file list a key twice), for a store that encrypts to the keys it
// reads with.
func ownRecipients(ids []age.Identity) ([]age.Recipient, error) {
	out := make([]age.Recipient, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		var r interface {
			age.Recipient
			String() string
		}
		switch id := id.(type) {
		case *age.X25519Identity:
			r = id.Recipient()
		case *age.HybridIdentity:
			r = id.Recipient()
		default: // crypt's parsers make no other kind
			return nil, fmt.Errorf("crypt: encrypt=age: identity %d has no public key to encrypt to; set %s", i+1, paramRecipients)
		}
		if !seen[r.String()] {
			seen[r.String()] = true
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("crypt: encrypt=age: no identity to take recipients from")
	}
	return out, nil
}

// URLKeys are the key settings a store URL's encryption parameters hold,
// for a program that reads the ciphertext itself (see PlainURL).
type URLKeys struct {
	IdentityFile   string // age_identity_file, or ""
	KeyFingerprint string // age_key_fingerprint, or ""
}

// PlainURL returns rawURL without its encryption parameters, so that
// storeurl.Open of it opens the store beneath the encryption layer (the
// ciphertext, behind blob.RefuseEncrypted's guard: see blob.Unguarded), and
// the key settings those parameters held. Rekey works on such a store. A bare
// path has no parameters and comes back unchanged, as does a URL without
// encryption parameters. Errors never repeat the URL, which may hold a
// password.
func PlainURL(rawURL string) (string, URLKeys, error) {
	inner, params, err := storeurl.Without(rawURL, wrapperName)
	if err != nil {
		return "", URLKeys{}, err
	}
	return inner, URLKeys{IdentityFile: params.Get(paramIdentityFile), KeyFingerprint: params.Get(paramFingerprint)}, nil
}
