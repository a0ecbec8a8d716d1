package blob_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// A prefixed store says how many key bytes it leaves, and means it: a key of
// exactly that length is stored, one byte more is refused as an invalid key.
// Wrappers forward the budget, and nested prefixes add up.
func TestKeyBudget(t *testing.T) {
	ctx := context.Background()
	inner := mem.New(nil)
	p, err := blob.Prefix(inner, "tenant/a") // "tenant/a/": 9 bytes
	if err != nil {
		t.Fatal(err)
	}
	pp, err := blob.Prefix(p, "team") // "team/" within it: 5 more
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		store blob.Store
		want  int
	}{
		{"plain", inner, blob.MaxKeyLen},
		{"prefix", p, blob.MaxKeyLen - 9},
		{"nested prefix", pp, blob.MaxKeyLen - 14},
		{"read-only over prefix", blob.ReadOnly(p), blob.MaxKeyLen - 9},
		{"counter over prefix", blob.NewCounter(p), blob.MaxKeyLen - 9},
	} {
		if got := blob.KeyBytes(c.store); got != c.want {
			t.Errorf("%s: KeyBytes = %d, want %d", c.name, got, c.want)
		}
	}
	for _, s := range []struct {
		name  string
		store blob.Store
	}{{"prefix", p}, {"nested prefix", pp}} {
		n := blob.KeyBytes(s.store)
		fits := strings.Repeat("k", n-4) + "/x.m"
		if _, err := s.store.Put(ctx, fits, []byte("x"), blob.Cond{}); err != nil {
			t.Errorf("%s: Put of a %d-byte key: %v", s.name, len(fits), err)
		}
		over := fits + "d"
		if _, err := s.store.Put(ctx, over, []byte("x"), blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("%s: Put of a %d-byte key: %v, want ErrInvalidKey", s.name, len(over), err)
		}
	}
}
