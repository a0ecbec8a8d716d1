package crypt

import (
	"bytes"
	"context"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// FuzzStoredObject plants any bytes as a stored object and reads it through
// the store: the read must not panic, and it may succeed only for the very
// object the store wrote, with its content. Seeds: that object, cut short,
// its format line alone, and bytes that are not one.
func FuzzStoredObject(f *testing.F) {
	fx := newFixture(f)
	content := []byte("the content of k\n")
	put(f, fx.store, "k", content)
	real := raw(f, fx.inner, "k")
	for _, seed := range [][]byte{real, real[:len(real)/2], real[:len(magic)+1], []byte("plain text"), nil} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, planted []byte) {
		if _, err := fx.inner.Put(context.Background(), "k", planted, blob.Cond{}); err != nil {
			t.Fatal(err)
		}
		got, _, err := fx.store.Get(context.Background(), "k", blob.MaxObjectBytes)
		if err == nil && (!bytes.Equal(planted, real) || !bytes.Equal(got, content)) {
			t.Fatalf("a changed object was read as %q", got)
		}
	})
}

// FuzzKeyObject plants any bytes as the store's integrity key object: a
// store opened over it must not panic, and reads succeed only when the key
// object is the one the store made.
func FuzzKeyObject(f *testing.F) {
	fx := newFixture(f)
	content := []byte("the content of k\n")
	put(f, fx.store, "k", content)
	realKey := raw(f, fx.inner, keyObject)
	object := raw(f, fx.inner, "k")
	for _, seed := range [][]byte{realKey, realKey[:len(realKey)-1], object, []byte("x"), nil} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, planted []byte) {
		inner := mem.New(nil)
		ctx := context.Background()
		for key, data := range map[string][]byte{keyObject: planted, "k": object} {
			if _, err := inner.Put(ctx, key, data, blob.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Wrap(inner, config([]testKey{fx.app}, fx.app, fx.escrow))
		if err != nil {
			return // refused at once
		}
		got, _, err := s.Get(ctx, "k", blob.MaxObjectBytes)
		if err == nil && (!bytes.Equal(planted, realKey) || !bytes.Equal(got, content)) {
			t.Fatalf("read %q under a changed key object", got)
		}
	})
}
