package crypt

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"filippo.io/age"
)

// EnvIdentity is the environment variable IdentitiesFromEnv reads. It holds
// the content of an age identity file (not a path to one).
const EnvIdentity = "CLOUDMEM_AGE_IDENTITY"

// Config holds the keys of a crypt store.
//
// The zero value is not usable: Wrap needs at least one recipient and one
// identity, and Validate reports what is missing. A Config is only read, so
// one may be shared by several stores and goroutines.
type Config struct {
	// Recipients receive every object written: typically the
	// application's key plus an offline escrow key. They are either all
	// X25519 (age1...) or all post-quantum hybrid (age1pq1...), because
	// age refuses to mix the two kinds in one file. At most
	// MaxX25519Recipients or MaxHybridRecipients of them, without
	// repeats. Only *age.X25519Recipient and *age.HybridRecipient are
	// accepted; ParseRecipients makes them from strings.
	Recipients []age.Recipient
	// Identities decrypt what is read: at least one of them must be the
	// private key of one of the Recipients, so the store can read what it
	// writes. Any kind may be listed; ParseIdentities and LoadIdentities
	// make them from an identity file.
	Identities []age.Identity
	// KeyFingerprint, when not empty, pins the store's integrity key:
	// the store's key object must hold the key with this fingerprint (32
	// lowercase hex digits, as Fingerprint returns it, and as a store
	// logs when it creates its key), whoever made it; any other key
	// object is refused with ErrUntrustedKey, and a pinned store that has
	// no key object is never given a new one. When empty, the key object
	// must carry the voucher of one of Identities, which it does when one
	// of them created it (or a Rekey that held one rewrote it). Pin it
	// where the store is read with other identities than its creator's:
	// an escrow key, a second application key, the new key after a Rekey.
	KeyFingerprint string
}

// Limits on the number of recipients, so that the age header always fits in
// the fixed space the format reserves for it (see the package
// documentation).
const (
	MaxX25519Recipients = 9
	MaxHybridRecipients = 5
)

// Validate reports whether c can be used with Wrap: recipients of one kind
// that fit the format, and an identity that reads what they receive. It
// does the same checks as Wrap, which a program may call at start-up to
// fail before the first write.
func (c Config) Validate() error {
	_, err := c.compile(true, true)
	return err
}

// kind is the family of the recipients, which fixes the header space.
type kind int

const (
	x25519 kind = iota + 1
	hybrid
)

// prelude is the size reserved for the format line and the age header of
// every object written to recipients of kind k. It is fixed per kind so that
// object sizes translate to plaintext sizes without reading the objects.
func (k kind) prelude() int {
	if k == hybrid {
		return 8192
	}
	return 1024
}

// keyring is a validated Config with what seal and open need.
type keyring struct {
	recipients []age.Recipient
	identities []age.Identity
	kind       kind
	keySet     [keySetLen]byte // identifies the recipient set; see keySetID
	pin        string          // Config.KeyFingerprint
}

// compile validates c; needRecipients and needIdentities say which halves
// the caller will use (Rekey reads with one Config and writes with another).
func (c Config) compile(needRecipients, needIdentities bool) (*keyring, error) {
	// Copies, so that a caller reusing its slices cannot race with us.
	kr := &keyring{recipients: slices.Clone(c.Recipients), identities: slices.Clone(c.Identities), pin: c.KeyFingerprint}
	if err := checkFingerprint(c.KeyFingerprint); err != nil {
		return nil, err
	}
	if needIdentities && len(c.Identities) == 0 {
		return nil, errors.New("crypt: no identities: one is needed to read objects")
	}
	for i, id := range c.Identities {
		if id == nil {
			return nil, fmt.Errorf("crypt: identity %d is nil", i+1)
		}
	}
	if !needRecipients && len(c.Recipients) == 0 {
		return kr, nil
	}
	if len(c.Recipients) == 0 {
		return nil, errors.New("crypt: no recipients: one is needed to write objects")
	}
	names := make([]string, len(c.Recipients))
	for i, r := range c.Recipients {
		var k kind
		switch r := r.(type) {
		case *age.X25519Recipient:
			k, names[i] = x25519, r.String()
		case *age.HybridRecipient:
			k, names[i] = hybrid, r.String()
		default:
			return nil, fmt.Errorf("crypt: recipient %d: unsupported type %T (want an X25519 or post-quantum hybrid age key)", i+1, r)
		}
		if kr.kind != 0 && kr.kind != k {
			return nil, errors.New("crypt: recipients mix X25519 (age1...) and post-quantum (age1pq1...) keys, which age refuses to encrypt to at once: rekey everything to one kind")
		}
		kr.kind = k
		if j := slices.Index(names[:i], names[i]); j >= 0 {
			return nil, fmt.Errorf("crypt: recipient %d repeats recipient %d", i+1, j+1)
		}
	}
	if max := kr.maxRecipients(); len(names) > max {
		return nil, fmt.Errorf("crypt: %d recipients of this kind, over the limit of %d", len(names), max)
	}
	kr.keySet = keySetID(names)
	if needIdentities && !readsOwnWrites(c.Identities, names) {
		return nil, errors.New("crypt: none of the identities is the private key of a recipient: the store could not read what it writes")
	}
	// Let age itself confirm it accepts the set, and that the header fits.
	hdr, err := headerSize(c.Recipients)
	if err != nil {
		return nil, fmt.Errorf("crypt: age refuses the recipients: %w", err)
	}
	if hdr > kr.kind.prelude()-len(magic)-1 {
		return nil, fmt.Errorf("crypt: the age header for these recipients is %d bytes, too long for the format", hdr)
	}
	return kr, nil
}

func (kr *keyring) maxRecipients() int {
	if kr.kind == hybrid {
		return MaxHybridRecipients
	}
	return MaxX25519Recipients
}

// keySetID names a recipient set independently of its order: the first
// keySetLen bytes of SHA-256 over the sorted recipient strings. It is stored
// inside each object's encrypted frame, so Rekey can tell which objects are
// already encrypted to the new set.
func keySetID(recipients []string) [keySetLen]byte {
	sorted := slices.Sorted(slices.Values(recipients))
	sum := sha256.Sum256([]byte("cloudmem-age key set\n" + strings.Join(sorted, "\n")))
	var id [keySetLen]byte
	copy(id[:], sum[:])
	return id
}

// readsOwnWrites reports whether some identity is the private key of one of
// the recipients. Identities of types it cannot inspect (plugins, custom
// types) are given the benefit of the doubt.
func readsOwnWrites(ids []age.Identity, recipients []string) bool {
	for _, id := range ids {
		var public string
		switch id := id.(type) {
		case *age.X25519Identity:
			public = id.Recipient().String()
		case *age.HybridIdentity:
			public = id.Recipient().String()
		default:
			return true
		}
		if slices.Contains(recipients, public) {
			return true
		}
	}
	return false
}

// headerSize encrypts nothing to recipients and returns the length of the
// age header, or age's reason for refusing them.
func headerSize(recipients []age.Recipient) (int, error) {
	var b bytes.Buffer
	w, err := age.Encrypt(&b, recipients...)
	if err != nil {
		return 0, err
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return headerLen(b.Bytes()), nil
}

// ParseRecipients parses age public keys: X25519 ("age1...") or post-quantum
// hybrid ("age1pq1..."), surrounding spaces ignored. An error names the
// position of the bad entry but never repeats it, in case a private key was
// pasted by mistake.
func ParseRecipients(keys ...string) ([]age.Recipient, error) {
	out := make([]age.Recipient, 0, len(keys))
	for i, s := range keys {
		s = strings.TrimSpace(s)
		var (
			r   age.Recipient
			err error
		)
		switch {
		case strings.HasPrefix(s, "age1pq1"):
			r, err = age.ParseHybridRecipient(s)
		case strings.HasPrefix(s, "age1"):
			r, err = age.ParseX25519Recipient(s)
		default:
			err = errors.New("not an age public key")
		}
		if err != nil {
			return nil, fmt.Errorf("crypt: recipient %d is not a valid age public key (age1... or age1pq1...)", i+1)
		}
		out = append(out, r)
	}
	return out, nil
}

// ParseIdentities parses the content of an age identity file: one private
// key per line (AGE-SECRET-KEY-1... or AGE-SECRET-KEY-PQ-1...), blank lines
// and lines starting with '#' ignored. It returns at least one identity or
// an error naming the offending line number, never its content.
func ParseIdentities(text string) ([]age.Identity, error) {
	var ids []age.Identity
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var (
			id  age.Identity
			err error
		)
		switch {
		case strings.HasPrefix(line, "AGE-SECRET-KEY-PQ-1"):
			id, err = age.ParseHybridIdentity(line)
		case strings.HasPrefix(line, "AGE-SECRET-KEY-1"):
			id, err = age.ParseX25519Identity(line)
		default:
			err = errors.New("unknown identity type")
		}
		if err != nil {
			// age's message may quote part of the key: drop it.
			return nil, fmt.Errorf("crypt: identities line %d is not a valid age identity", n+1)
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, errors.New("crypt: no age identity found")
	}
	return ids, nil
}

// maxIdentityFile bounds what LoadIdentities reads.
const maxIdentityFile = 1 << 20

// LoadIdentities reads an age identity file (see ParseIdentities). Errors
// name the path but never the file's content.
func LoadIdentities(path string) ([]age.Identity, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("crypt: identity file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxIdentityFile+1))
	if err != nil {
		return nil, fmt.Errorf("crypt: identity file: %w", err)
	}
	if len(data) > maxIdentityFile {
		return nil, fmt.Errorf("crypt: identity file %s is over %d bytes", path, maxIdentityFile)
	}
	ids, err := ParseIdentities(string(data))
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return ids, nil
}

// IdentitiesFromEnv parses the identity file content held by the environment
// variable EnvIdentity. It fails when the variable is unset or empty.
func IdentitiesFromEnv() ([]age.Identity, error) {
	text := os.Getenv(EnvIdentity)
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("crypt: %s is not set", EnvIdentity)
	}
	ids, err := ParseIdentities(text)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, EnvIdentity)
	}
	return ids, nil
}

// GenerateIdentity returns a new X25519 identity as the content of an
// identity file (a comment line with the public key, then the private key),
// and its public recipient string. It writes nothing; the caller must store
// the identity somewhere private.
func GenerateIdentity() (identity, recipient string, err error) {
	id, err := age.GenerateX25519Identity()
	if err != nil {
		return "", "", fmt.Errorf("crypt: generating an identity: %w", err)
	}
	recipient = id.Recipient().String()
	return identityFile(recipient, id.String()), recipient, nil
}

// GenerateHybridIdentity is GenerateIdentity for a post-quantum hybrid key
// (AGE-SECRET-KEY-PQ-1..., recipient age1pq1...).
func GenerateHybridIdentity() (identity, recipient string, err error) {
	id, err := age.GenerateHybridIdentity()
	if err != nil {
		return "", "", fmt.Errorf("crypt: generating an identity: %w", err)
	}
	recipient = id.Recipient().String()
	return identityFile(recipient, id.String()), recipient, nil
}

func identityFile(recipient, secret string) string {
	return "# public key: " + recipient + "\n" + secret + "\n"
}
