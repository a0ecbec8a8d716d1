package crypt

import (
	"bytes"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// countingIdentity counts the unwraps (key agreements) of the identity it
// wraps.
type countingIdentity struct {
	age.Identity
	unwraps atomic.Int64
}

func (c *countingIdentity) Unwrap(stanzas []*age.Stanza) ([]byte, error) {
	c.unwraps.Add(1)
	return c.Identity.Unwrap(stanzas)
}

// TestFileKeyCache: a version this store wrote, or read before, is read
// with no unwrap; one it did not (here: after its cache is emptied, as in
// another process), or one altered in its header, misses; an object
// altered anywhere is refused whether or not its file key is cached.
func TestFileKeyCache(t *testing.T) {
	app, escrow := newX25519Key(t), newX25519Key(t)
	id := &countingIdentity{Identity: app.id}
	inner := mem.New(nil)
	s := wrap(t, inner, Config{Recipients: []age.Recipient{app.recipient, escrow.recipient}, Identities: []age.Identity{id}})
	forget := func() { s.(*store).fileKeys = newFileKeyCache(fileKeyCacheSize) }
	ctx := t.Context()
	const key = "notes/a.md"
	wantUnwraps := func(what string, n int64) {
		t.Helper()
		if got := id.unwraps.Swap(0); got != n {
			t.Fatalf("%s: %d unwraps, want %d", what, got, n)
		}
	}
	put(t, s, key, []byte("one"))
	wantUnwraps("Put on a new store", 0)
	if got := get(t, s, key); string(got) != "one" {
		t.Fatalf("Get of what it wrote = %q", got)
	}
	wantUnwraps("Get of what it wrote", 0)
	forget()
	for i, want := range []int64{1, 0, 0} {
		if got := get(t, s, key); string(got) != "one" {
			t.Fatalf("Get %d = %q", i, got)
		}
		wantUnwraps("Get of a version it did not write", want)
	}
	put(t, s, key, []byte("two"))
	forget()
	if got := get(t, s, key); string(got) != "two" {
		t.Fatalf("Get after a rewrite = %q", got)
	}
	wantUnwraps("Get after a rewrite it does not remember", 1)

	orig := raw(t, inner, key)
	_, ourEnd, payload := regions(t, orig)
	for _, tc := range []struct {
		what    string
		at      int
		err     error
		unwraps int64
	}{
		{"the payload's last byte (a cache hit)", len(orig) - 1, ErrCorrupt, 0},
		{"the payload's nonce (a cache hit)", payload, ErrCorrupt, 0},
		{"the header MAC (a miss)", payload - 3, ErrCorrupt, 1},
		{"our stanza's body (a miss)", ourEnd - 3, ErrWrongKey, 1},
		{"the escrow stanza (a miss)", ourEnd + 12, ErrCorrupt, 1},
	} {
		data := bytes.Clone(orig)
		data[tc.at] = altered(data[tc.at])
		if _, err := inner.Put(ctx, key, data, blob.Cond{}); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Get(ctx, key, blob.MaxObjectBytes)
		if !errors.Is(err, tc.err) || got != nil {
			t.Errorf("altered %s: %q, %v; want %v and no data", tc.what, got, err, tc.err)
		}
		wantUnwraps("altered "+tc.what, tc.unwraps)
	}
}

// TestFileKeyCacheBound: the cache keeps at most its size, dropping the
// least recently used key; a nil cache remembers nothing.
func TestFileKeyCacheBound(t *testing.T) {
	c := newFileKeyCache(2)
	h := func(i byte) [32]byte { return [32]byte{i} }
	fk := func(i byte) []byte { return bytes.Repeat([]byte{i}, 16) }
	want := func(i byte, cached bool) {
		t.Helper()
		got, ok := c.get(h(i))
		if ok != cached || (ok && !bytes.Equal(got, fk(i))) {
			t.Fatalf("get(%d) = %x, %v; want cached %v", i, got, ok, cached)
		}
	}
	c.put(h(0), fk(0))
	c.put(h(1), fk(1))
	want(0, true) // 1 is now the least recently used
	c.put(h(2), fk(2))
	if n := c.len(); n != 2 {
		t.Fatalf("%d keys cached, want 2", n)
	}
	want(1, false)
	want(0, true)
	want(2, true)

	var none *fileKeyCache
	none.put(h(0), fk(0))
	if _, ok := none.get(h(0)); ok {
		t.Fatal("a nil cache remembered a key")
	}
}

// altered returns another byte in b's place: in the header, another
// base64 character (flipping a bit of one could make it no base64 at all,
// say '+' into '*', and the header would fail to parse rather than to
// authenticate); in the binary payload, b with its low bit flipped.
func altered(b byte) byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	if strings.IndexByte(alphabet, b) < 0 {
		return b ^ 0x01
	}
	if b == 'A' {
		return 'B'
	}
	return 'A'
}
