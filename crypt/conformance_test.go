package crypt_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/crypt"
)

// newConfig returns a Config with a new application key and a new escrow
// key as recipients, reading with the application key.
func newConfig(t testing.TB, generate func() (string, string, error)) crypt.Config {
	t.Helper()
	appID, app, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	_, escrow, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := crypt.ParseIdentities(appID)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := crypt.ParseRecipients(app, escrow)
	if err != nil {
		t.Fatal(err)
	}
	return crypt.Config{Recipients: rs, Identities: ids}
}

func mustWrap(t testing.TB, inner blob.Store, cfg crypt.Config) blob.Store {
	t.Helper()
	s, err := crypt.Wrap(inner, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuiteOverMem(t *testing.T) {
	cfg := newConfig(t, crypt.GenerateIdentity)
	blobtest.Run(t, func(t *testing.T) blob.Store { return mustWrap(t, mem.New(nil), cfg) })
}

func TestSuiteOverMemPostQuantum(t *testing.T) {
	cfg := newConfig(t, crypt.GenerateHybridIdentity)
	blobtest.Run(t, func(t *testing.T) blob.Store { return mustWrap(t, mem.New(nil), cfg) })
}

func TestSuiteOverFile(t *testing.T) {
	cfg := newConfig(t, crypt.GenerateIdentity)
	blobtest.Run(t, func(t *testing.T) blob.Store {
		s, err := file.Open(t.Context(), t.TempDir(), &file.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return mustWrap(t, s, cfg)
	})
}

func TestSuiteReadOnly(t *testing.T) {
	cfg := newConfig(t, crypt.GenerateIdentity)
	seeded := func(t *testing.T, objects map[string][]byte) blob.Store {
		inner := mem.New(nil)
		s := mustWrap(t, inner, cfg)
		for k, v := range objects {
			if _, err := s.Put(t.Context(), k, v, blob.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		return inner
	}
	t.Run("ReadOnlyOfCrypt", func(t *testing.T) {
		blobtest.RunReadOnly(t, func(t *testing.T, objects map[string][]byte) blob.Store {
			return blob.ReadOnly(mustWrap(t, seeded(t, objects), cfg))
		})
	})
	t.Run("CryptOfReadOnly", func(t *testing.T) {
		blobtest.RunReadOnly(t, func(t *testing.T, objects map[string][]byte) blob.Store {
			return mustWrap(t, blob.ReadOnly(seeded(t, objects)), cfg)
		})
	})
}
