package crypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// rekeyObjects are the contents the rekey tests start from.
var rekeyObjects = map[string][]byte{
	"a.md":            []byte("alpha"),
	"dir/b.md":        []byte("beta"),
	"dir/empty":       {},
	"dir/sub/big":     pattern(ageChunk + 1),
	".cloudmem/other": []byte("bookkeeping of another layer"),
}

func seedRekey(t *testing.T, s blob.Store) {
	t.Helper()
	for k, v := range rekeyObjects {
		put(t, s, k, v)
	}
}

// wantFrameKeySet checks the recipient set recorded in every stored object.
func wantFrameKeySet(t *testing.T, inner blob.Store, ids []testKey, want Config) {
	t.Helper()
	kr, err := want.compile(true, false)
	if err != nil {
		t.Fatal(err)
	}
	infos, err := blob.ListAll(t.Context(), inner, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		f, err := decrypt(config(ids).Identities, nil, info.Key, raw(t, inner, info.Key))
		if err != nil {
			t.Fatalf("%s: %v", info.Key, err)
		}
		if f.keySet != kr.keySet {
			t.Errorf("%s is encrypted to another recipient set", info.Key)
		}
	}
}

func wantContents(t *testing.T, s blob.Store, want map[string][]byte) {
	t.Helper()
	for k, v := range want {
		if got := get(t, s, k); !bytes.Equal(got, v) {
			t.Errorf("Get(%q) = %d bytes, want %d", k, len(got), len(v))
		}
		if st, err := s.Stat(t.Context(), k); err != nil || st.Size != int64(len(v)) {
			t.Errorf("Stat(%q) = Size %d, %v; want %d", k, st.Size, err, len(v))
		}
	}
	wantListed(t, s, "", slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	})...)
}

// TestRekey rotates the application key, keeping the escrow key.
func TestRekey(t *testing.T) {
	f := newFixture(t)
	seedRekey(t, f.store)
	app2 := newX25519Key(t)
	to := config([]testKey{app2}, app2, f.escrow)
	var calls [][2]int
	err := Rekey(t.Context(), f.inner, config([]testKey{f.app}), to, func(done, total int) {
		calls = append(calls, [2]int{done, total})
	})
	if err != nil {
		t.Fatalf("Rekey: %v", err)
	}
	n := len(rekeyObjects)
	if want := [][2]int{{0, n}, {1, n}, {2, n}, {3, n}, {4, n}, {5, n}}; !slices.Equal(calls, want) {
		t.Fatalf("progress calls = %v, want %v", calls, want)
	}
	wantFrameKeySet(t, f.inner, []testKey{app2}, to)
	wantContents(t, wrap(t, f.inner, to), rekeyObjects)
	escrow := config([]testKey{f.escrow}, app2, f.escrow)
	escrow.KeyFingerprint = fingerprintOf(t, f.store)
	wantContents(t, wrap(t, f.inner, escrow), rekeyObjects)

	// The old application key reads nothing any more, not even the key
	// object; a store that had loaded the integrity key still fails to
	// decrypt the objects.
	old := wrap(t, f.inner, config([]testKey{f.app}, f.app))
	for k := range rekeyObjects {
		data, _, err := old.Get(t.Context(), k, blob.MaxObjectBytes)
		wantRefused(t, "Get with the retired key", data, err, ErrWrongKey, k, f.app.secret)
	}
	if _, err := old.Put(t.Context(), "new", []byte("x"), blob.Cond{}); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("Put with the retired key: %v, want ErrWrongKey on the key object", err)
	}
	data, _, err := f.store.Get(t.Context(), "a.md", blob.MaxObjectBytes)
	wantRefused(t, "Get by a store that cached the integrity key", data, err, ErrWrongKey, "a.md")
}

// TestRekeyResume interrupts a Rekey, then runs it again: the second run
// rewrites only what the first did not, and a third rewrites nothing.
func TestRekeyResume(t *testing.T) {
	f := newFixture(t)
	seedRekey(t, f.store)
	app2 := newX25519Key(t)
	from, to := config([]testKey{f.app}), config([]testKey{app2}, app2, f.escrow)
	ctx, cancel := context.WithCancel(t.Context())
	err := Rekey(ctx, f.inner, from, to, func(done, total int) {
		if done == 2 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Rekey: %v, want context.Canceled", err)
	}
	counter := blob.NewCounter(f.inner)
	for _, want := range []int64{int64(len(rekeyObjects) - 2), 0} {
		counter.Reset()
		if err := Rekey(t.Context(), counter, from, to, nil); err != nil {
			t.Fatalf("resumed Rekey: %v", err)
		}
		if got := counter.Counts().Put; got != want {
			t.Fatalf("resumed Rekey wrote %d objects, want %d", got, want)
		}
	}
	wantFrameKeySet(t, f.inner, []testKey{app2}, to)
	wantContents(t, wrap(t, f.inner, to), rekeyObjects)
}

// interposer runs before once, just before the first Put of key reaches the
// inner store: a rival write at the worst moment.
type interposer struct {
	blob.Store
	key    string
	before func()
}

func (s *interposer) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if key == s.key && s.before != nil {
		before := s.before
		s.before = nil
		before()
	}
	return s.Store.Put(ctx, key, data, c)
}

// TestRekeyConcurrentWriter lets a writer change an object between Rekey's
// read and its write: the writer's content is never lost, and ends up
// encrypted to the new recipients whichever recipients the writer used.
func TestRekeyConcurrentWriter(t *testing.T) {
	for _, writerUsesNewKeys := range []bool{false, true} {
		t.Run(fmt.Sprintf("writerUsesNewKeys=%v", writerUsesNewKeys), func(t *testing.T) {
			f := newFixture(t)
			seedRekey(t, f.store)
			app2 := newX25519Key(t)
			to := config([]testKey{app2}, app2, f.escrow)
			writer := f.store
			if writerUsesNewKeys {
				writer = wrap(t, f.inner, to)
			}
			want := with(rekeyObjects, "dir/b.md", []byte("rewritten during the rekey"))
			hook := &interposer{Store: f.inner, key: "dir/b.md", before: func() {
				put(t, writer, "dir/b.md", want["dir/b.md"])
			}}
			counter := blob.NewCounter(hook)
			if err := Rekey(t.Context(), counter, config([]testKey{f.app}), to, nil); err != nil {
				t.Fatalf("Rekey: %v", err)
			}
			wantFrameKeySet(t, f.inner, []testKey{app2}, to)
			wantContents(t, wrap(t, f.inner, to), want)
			// One Put per object (the one that loses the race
			// included) and the key object, plus the retry when the
			// writer used the old keys.
			wantPuts := int64(len(rekeyObjects) + 1)
			if !writerUsesNewKeys {
				wantPuts++
			}
			if got := counter.Counts().Put; got != wantPuts {
				t.Fatalf("Rekey made %d Puts, want %d", got, wantPuts)
			}
		})
	}
}

// with returns a copy of m with key set to v.
func with(m map[string][]byte, key string, v []byte) map[string][]byte {
	out := map[string][]byte{key: v}
	for k, w := range m {
		if k != key {
			out[k] = w
		}
	}
	return out
}

// TestRekeyReportsBadObjects checks that objects that cannot be read are
// reported and left alone, and that every other object is rekeyed.
func TestRekeyReportsBadObjects(t *testing.T) {
	f := newFixture(t)
	seedRekey(t, f.store)
	put(t, f.inner, "plain.md", []byte("never encrypted"))
	stored := raw(t, f.inner, "dir/b.md")
	put(t, f.inner, "swapped.md", stored)
	app2 := newX25519Key(t)
	to := config([]testKey{app2}, app2, f.escrow)
	var last [2]int
	err := Rekey(t.Context(), f.inner, config([]testKey{f.app}), to, func(done, total int) { last = [2]int{done, total} })
	if !errors.Is(err, ErrNotEncrypted) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Rekey error = %v, want one wrapping ErrNotEncrypted and ErrCorrupt", err)
	}
	want := `crypt: rekey: 2 of 7 objects were left as they were: crypt: object is not encrypted: "plain.md": it lacks the cloudmem-age/v1 format line
crypt: object failed its integrity check: "swapped.md": its frame belongs to another key`
	if err.Error() != want {
		t.Fatalf("Rekey error =\n%s\nwant\n%s", err, want)
	}
	if last != [2]int{7, 7} {
		t.Fatalf("last progress call = %v, want [7 7]", last)
	}
	if !bytes.Equal(raw(t, f.inner, "swapped.md"), stored) {
		t.Fatal("Rekey changed an object it could not verify")
	}
	for _, k := range []string{"plain.md", "swapped.md"} {
		if err := f.inner.Delete(t.Context(), k, blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	wantContents(t, wrap(t, f.inner, to), rekeyObjects)
}

// TestRekeyToPostQuantum moves a store from X25519 to hybrid keys, which
// changes the prelude size: sizes stay exact under the new configuration.
func TestRekeyToPostQuantum(t *testing.T) {
	f := newFixture(t)
	seedRekey(t, f.store)
	app2, escrow2 := newHybridKey(t), newHybridKey(t)
	to := config([]testKey{app2}, app2, escrow2)
	if err := Rekey(t.Context(), f.inner, config([]testKey{f.app}), to, nil); err != nil {
		t.Fatalf("Rekey: %v", err)
	}
	wantFrameKeySet(t, f.inner, []testKey{app2}, to)
	wantContents(t, wrap(t, f.inner, to), rekeyObjects)
}

func TestRekeyConfigs(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	app2 := newX25519Key(t)
	for _, tc := range []struct {
		name     string
		from, to Config
		want     string
	}{
		{"from without identities", config(nil, f.app), config(nil, app2),
			"crypt: rekey: from: crypt: no identities: one is needed to read objects"},
		{"to without recipients", config([]testKey{f.app}), config([]testKey{app2}),
			"crypt: rekey: to: crypt: no recipients: one is needed to write objects"},
	} {
		if err := Rekey(ctx, f.inner, tc.from, tc.to, nil); err == nil || err.Error() != tc.want {
			t.Errorf("%s: Rekey error = %v, want %q", tc.name, err, tc.want)
		}
	}
	// An empty store has nothing to rekey.
	var calls [][2]int
	err := Rekey(ctx, mem.New(nil), config([]testKey{f.app}), config(nil, app2), func(d, n int) { calls = append(calls, [2]int{d, n}) })
	if err != nil || !slices.Equal(calls, [][2]int{{0, 0}}) {
		t.Fatalf("Rekey of an empty store = %v, progress %v", err, calls)
	}
	// Objects without a key object cannot be verified, so are not rekeyed.
	put(t, f.inner, "x", []byte("x"))
	err = Rekey(ctx, f.inner, config([]testKey{f.app}), config(nil, app2), nil)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Rekey of a store without a key object: %v, want ErrCorrupt", err)
	}
}
