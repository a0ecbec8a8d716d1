package crypt

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// testKey is a freshly generated age key pair.
type testKey struct {
	id        age.Identity
	recipient age.Recipient
	secret    string // the private key string, to check it never leaks
	public    string
}

func newX25519Key(t testing.TB) testKey {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	return testKey{id, id.Recipient(), id.String(), id.Recipient().String()}
}

func newHybridKey(t testing.TB) testKey {
	t.Helper()
	id, err := age.GenerateHybridIdentity()
	if err != nil {
		t.Fatal(err)
	}
	return testKey{id, id.Recipient(), id.String(), id.Recipient().String()}
}

// config encrypts to every key in to and reads with every key in with.
func config(with []testKey, to ...testKey) Config {
	var c Config
	for _, k := range to {
		c.Recipients = append(c.Recipients, k.recipient)
	}
	for _, k := range with {
		c.Identities = append(c.Identities, k.id)
	}
	return c
}

func wrap(t testing.TB, inner blob.Store, c Config) blob.Store {
	t.Helper()
	s, err := Wrap(inner, c)
	if err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	return s
}

// fixture is an application key and an escrow key, and a crypt store over
// a mem store encrypting to both and reading with the application key.
type fixture struct {
	app, escrow testKey
	inner       blob.Store
	store       blob.Store
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{app: newX25519Key(t), escrow: newX25519Key(t), inner: mem.New(nil)}
	f.store = wrap(t, f.inner, config([]testKey{f.app}, f.app, f.escrow))
	return f
}

func put(t testing.TB, s blob.Store, key string, data []byte) blob.Info {
	t.Helper()
	info, err := s.Put(t.Context(), key, data, blob.Cond{})
	if err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
	return info
}

func get(t testing.TB, s blob.Store, key string) []byte {
	t.Helper()
	data, _, err := s.Get(t.Context(), key, blob.MaxObjectBytes)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return data
}

func raw(t testing.TB, inner blob.Store, key string) []byte {
	t.Helper()
	return get(t, inner, key)
}

// wantRefused checks that a Get failed with target (one of the package's
// sentinels) inside an *Error naming key, returned no data, and that the
// error's texts hold none of the secrets.
func wantRefused(t *testing.T, what string, data []byte, err error, target error, key string, secrets ...string) {
	t.Helper()
	if data != nil {
		t.Fatalf("%s: returned %d bytes of data with error %v, want nil data", what, len(data), err)
	}
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want one wrapping %q", what, err, target)
	}
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Fatalf("%s: error %v is not a *crypt.Error", what, err)
	}
	if cerr.Key != key {
		t.Fatalf("%s: Error.Key = %q, want %q", what, cerr.Key, key)
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) || strings.Contains(cerr.ModelCause(), s) {
			t.Fatalf("%s: error text %q or its model cause contains a secret", what, err)
		}
	}
}

// pattern is n bytes that do not repeat every 256 bytes.
func pattern(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), i%7+1))
	}
	return b.Bytes()[:n]
}
