package crypt

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

func TestStoredObjectIsEncrypted(t *testing.T) {
	f := newFixture(t)
	secret := []byte("the launch code is 0000, keep it in memory")
	put(t, f.store, "notes/secret.md", secret)
	stored := raw(t, f.inner, "notes/secret.md")
	if bytes.Contains(stored, secret[4:20]) || bytes.Contains(stored, []byte("notes/secret.md")) {
		t.Fatal("the stored object contains plaintext or its key in the clear")
	}
	line := magic + strings.Repeat(" ", bytes.IndexByte(stored, '\n')-len(magic)) + "\n" + "age-encryption.org/v1\n-> X25519 "
	if !bytes.HasPrefix(stored, []byte(line)) {
		t.Fatalf("stored object starts %q, want %q", stored[:min(len(stored), 200)], line)
	}
	if got := get(t, f.store, "notes/secret.md"); !bytes.Equal(got, secret) {
		t.Fatalf("Get = %q, want %q", got, secret)
	}
	// The escrow key alone reads it too, once it pins the store's key: it
	// did not create it.
	cfg := config([]testKey{f.escrow}, f.app, f.escrow)
	if _, _, err := wrap(t, f.inner, cfg).Get(t.Context(), "notes/secret.md", blob.MaxObjectBytes); !errors.Is(err, ErrUntrustedKey) {
		t.Fatalf("Get with the escrow identity and no pin: %v, want ErrUntrustedKey", err)
	}
	cfg.KeyFingerprint = fingerprintOf(t, f.store)
	escrow := wrap(t, f.inner, cfg)
	if got := get(t, escrow, "notes/secret.md"); !bytes.Equal(got, secret) {
		t.Fatalf("Get with the escrow identity = %q, want %q", got, secret)
	}
}

// TestSizes checks that every Info reports the plaintext size, and that the
// stored size is exactly the documented function of it, for both kinds of
// recipients and sizes around the 64 KiB chunk boundaries.
func TestSizes(t *testing.T) {
	sizes := []int{0, 1, 65535, 65536, 65537, 200000}
	// Sizes whose frame (content + 51 + len(key)) lands on a chunk boundary.
	key := "dir/sized"
	for _, chunks := range []int{1, 2, 3} {
		edge := chunks*ageChunk - frameFixed - len(key)
		sizes = append(sizes, edge-1, edge, edge+1)
	}
	for _, kind := range []struct {
		name    string
		newKey  func(testing.TB) testKey
		prelude int
	}{
		{"X25519", newX25519Key, 1024},
		{"Hybrid", newHybridKey, 8192},
	} {
		t.Run(kind.name, func(t *testing.T) {
			app, escrow := kind.newKey(t), kind.newKey(t)
			inner := mem.New(nil)
			s := wrap(t, inner, config([]testKey{app}, app, escrow))
			for _, n := range sizes {
				data := pattern(n)
				if info := put(t, s, key, data); info.Size != int64(n) {
					t.Fatalf("size %d: Put Info.Size = %d", n, info.Size)
				}
				got, info, err := s.Get(t.Context(), key, blob.MaxObjectBytes)
				if err != nil || info.Size != int64(n) || !bytes.Equal(got, data) {
					t.Fatalf("size %d: Get = %d bytes, Info.Size %d, %v", n, len(got), info.Size, err)
				}
				if st, err := s.Stat(t.Context(), key); err != nil || st.Size != int64(n) {
					t.Fatalf("size %d: Stat Info.Size = %d, %v", n, st.Size, err)
				}
				infos, err := blob.ListAll(t.Context(), s, "dir/")
				if err != nil || len(infos) != 1 || infos[0].Size != int64(n) {
					t.Fatalf("size %d: List = %+v, %v", n, infos, err)
				}
				st, err := inner.Stat(t.Context(), key)
				if want := storedSize(int64(n), len(key), kind.prelude); err != nil || st.Size != want {
					t.Fatalf("size %d: stored size = %d, %v; want %d", n, st.Size, err, want)
				}
			}
		})
	}
}

// TestPlaintextSize checks that plaintextSize inverts storedSize and that
// no two content sizes share a stored size.
func TestPlaintextSize(t *testing.T) {
	for _, keyLen := range []int{1, 10, 1024} {
		seen := map[int64]int64{}
		for n := int64(0); n < 3*ageChunk+100; n += 7 {
			stored := storedSize(n, keyLen, 1024)
			got, ok := plaintextSize(stored, keyLen, 1024)
			if !ok || got != n {
				t.Fatalf("keyLen %d: plaintextSize(storedSize(%d)) = %d, %v", keyLen, n, got, ok)
			}
			if prev, dup := seen[stored]; dup {
				t.Fatalf("keyLen %d: sizes %d and %d are both stored in %d bytes", keyLen, prev, n, stored)
			}
			seen[stored] = n
		}
	}
	// Sizes no object of this format has.
	for _, stored := range []int64{0, 10, 1024, 1024 + ageNonce + frameFixed + 9, 1024 + ageNonce + ageChunk + ageTag + 5} {
		if got, ok := plaintextSize(stored, 10, 1024); ok {
			t.Errorf("plaintextSize(%d) = %d, ok; want not ok", stored, got)
		}
	}
}

func TestKeyObjectIsReserved(t *testing.T) {
	f := newFixture(t)
	put(t, f.store, "a", []byte("a"))
	before := raw(t, f.inner, keyObject)
	ctx := t.Context()
	_, _, err := f.store.Get(ctx, keyObject, blob.MaxObjectBytes)
	wantInvalid(t, "Get", err)
	_, err = f.store.Stat(ctx, keyObject)
	wantInvalid(t, "Stat", err)
	for _, c := range []blob.Cond{{}, {IfAbsent: true}, {IfVersion: "1"}} {
		_, err = f.store.Put(ctx, keyObject, []byte("x"), c)
		wantInvalid(t, fmt.Sprintf("Put(%+v)", c), err)
	}
	wantInvalid(t, "Delete", f.store.Delete(ctx, keyObject, blob.Cond{}))
	wantInvalid(t, "Rename from it", blob.Rename(ctx, f.store, keyObject, "stolen"))
	wantInvalid(t, "Rename onto it", blob.Rename(ctx, f.store, "a", keyObject))

	// Other keys under .cloudmem/ are ordinary, and deleting that tree
	// through the wrapper spares the key object.
	put(t, f.store, ".cloudmem/other", []byte("o"))
	wantListed(t, f.store, "", ".cloudmem/other", "a")
	wantListed(t, f.store, ".cloudmem/", ".cloudmem/other")
	if err := blob.DeleteTree(ctx, f.store, ".cloudmem"); err != nil {
		t.Fatalf("DeleteTree(.cloudmem): %v", err)
	}
	wantListed(t, f.store, "", "a")
	wantListed(t, f.inner, "", keyObject, "a")
	if after := raw(t, f.inner, keyObject); !bytes.Equal(after, before) {
		t.Fatal("the key object changed")
	}
	if err := blob.DeleteTree(ctx, f.store, ".cloudmem"); !errors.Is(err, blob.ErrNotExist) {
		t.Fatalf("DeleteTree(.cloudmem) of a tree holding only the key object: %v, want ErrNotExist", err)
	}
}

func wantInvalid(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("%s of the key object: error = %v, want ErrInvalidKey", what, err)
	}
}

func wantListed(t *testing.T, s blob.Store, prefix string, want ...string) {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	var got []string
	for _, info := range infos {
		got = append(got, info.Key)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List(%q) = %q, want %q", prefix, got, want)
	}
}

// TestCapabilities checks what the wrapper forwards: DeleteTree (blob.Tree) and
// the read-only Trait, but not Rename (blob.Tree), whose atomic move would break the path
// binding; blob.Rename re-encrypts through the wrapper instead.
func TestCapabilities(t *testing.T) {
	f := newFixture(t)
	counter := blob.NewCounter(f.inner)
	s := wrap(t, counter, config([]testKey{f.app}, f.app))
	put(t, s, "d/a", []byte("A"))
	put(t, s, "d/b", []byte("B"))
	if err := blob.Rename(t.Context(), s, "d", "e"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	if n := counter.Counts().Rename; n != 0 {
		t.Fatalf("the inner store's Rename was called %d times", n)
	}
	if got := get(t, s, "e/b"); string(got) != "B" {
		t.Fatalf("Get(e/b) = %q after the rename", got)
	}
	if err := blob.DeleteTree(t.Context(), s, "e"); err != nil {
		t.Fatalf("DeleteTree: %v", err)
	}
	if n := counter.Counts().DeleteTree; n != 1 {
		t.Fatalf("the inner store's DeleteTree was called %d times, want 1", n)
	}
	wantListed(t, s, "")
	if blob.IsReadOnly(s) {
		t.Fatal("a store over a writable store reports ReadOnly")
	}
	if ro := wrap(t, blob.ReadOnly(f.inner), config([]testKey{f.app}, f.app)); !blob.IsReadOnly(ro) {
		t.Fatal("a store over a read-only store does not report ReadOnly")
	}
}

// TestKeyObjectRace starts several processes (separate wrappers over one
// store) at once on an empty store: they must converge on one integrity key,
// so each reads what the others wrote.
func TestKeyObjectRace(t *testing.T) {
	app := newX25519Key(t)
	inner := mem.New(nil)
	const writers = 12
	stores := make([]blob.Store, writers)
	for i := range stores {
		stores[i] = wrap(t, inner, config([]testKey{app}, app))
	}
	start := make(chan struct{})
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i, s := range stores {
		wg.Go(func() {
			<-start
			_, errs[i] = s.Put(t.Context(), fmt.Sprintf("w%02d", i), []byte{byte(i)}, blob.Cond{})
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("racing first writes: %v", err)
	}
	for _, s := range stores {
		for i := range writers {
			if got := get(t, s, fmt.Sprintf("w%02d", i)); !bytes.Equal(got, []byte{byte(i)}) {
				t.Fatalf("w%02d = %q", i, got)
			}
		}
	}
}

// TestKeyObjectCreateConflict makes a rival create the key object between
// this store's read (which found none) and its Put(IfAbsent): the store
// must adopt the rival's key, not fail and not overwrite it.
func TestKeyObjectCreateConflict(t *testing.T) {
	app := newX25519Key(t)
	cfg := config([]testKey{app}, app)
	inner := mem.New(nil)
	rival := wrap(t, inner, cfg)
	hook := &interposer{Store: inner, key: keyObject, before: func() { put(t, rival, "rival", []byte("first")) }}
	s := wrap(t, hook, cfg)
	put(t, s, "mine", []byte("second"))
	if got := get(t, s, "rival"); string(got) != "first" {
		t.Fatalf("Get(rival) = %q", got)
	}
	if got := get(t, rival, "mine"); string(got) != "second" {
		t.Fatalf("Get(mine) through the rival = %q", got)
	}
}

// TestKeyObjectMissing checks that a lost key object is reported, and never
// replaced by a new one while objects depend on the old one.
func TestKeyObjectMissing(t *testing.T) {
	f := newFixture(t)
	put(t, f.store, "a", []byte("a"))
	if err := f.inner.Delete(t.Context(), keyObject, blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	fresh := wrap(t, f.inner, config([]testKey{f.app}, f.app, f.escrow))
	data, _, err := fresh.Get(t.Context(), "a", blob.MaxObjectBytes)
	wantRefused(t, "Get without the key object", data, err, ErrCorrupt, keyObject)
	_, err = fresh.Put(t.Context(), "b", []byte("b"), blob.Cond{})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Put without the key object: %v, want ErrCorrupt", err)
	}
	wantListed(t, f.inner, "", "a")
	var cerr *Error
	if errors.As(err, &cerr); cerr.ModelCause() != "the store's encryption key object is missing or damaged" {
		t.Fatalf("ModelCause = %q", cerr.ModelCause())
	}
	// The store that loaded the key before keeps working from memory.
	if got := get(t, f.store, "a"); string(got) != "a" {
		t.Fatalf("Get = %q", got)
	}
}

// TestSharedIdentities uses one Config, hence the same identity values,
// from many goroutines and stores at once; run with -race.
func TestSharedIdentities(t *testing.T) {
	for _, kind := range []struct {
		name   string
		newKey func(testing.TB) testKey
	}{{"X25519", newX25519Key}, {"Hybrid", newHybridKey}} {
		t.Run(kind.name, func(t *testing.T) {
			app, escrow := kind.newKey(t), kind.newKey(t)
			cfg := config([]testKey{app, escrow}, app, escrow)
			inner := mem.New(nil)
			stores := []blob.Store{wrap(t, inner, cfg), wrap(t, inner, cfg)}
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for g := range errs {
				wg.Go(func() {
					s := stores[g%len(stores)]
					for i := range 20 {
						key := fmt.Sprintf("g%d/%d", g, i)
						want := fmt.Appendf(nil, "goroutine %d, write %d", g, i)
						if _, err := s.Put(t.Context(), key, want, blob.Cond{}); err != nil {
							errs[g] = err
							return
						}
						got, _, err := stores[(g+1)%len(stores)].Get(t.Context(), key, blob.MaxObjectBytes)
						if err != nil || !bytes.Equal(got, want) {
							errs[g] = fmt.Errorf("Get(%q) = %q, %v", key, got, err)
							return
						}
					}
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestKelvinSign: the store refuses a key exactly when blob.EqualFold (the
// rule blob and the file store use too) takes it for the key object: the
// Kelvin sign is k there, as mixed ASCII case is, and a look-alike of
// another rune is an ordinary key.
func TestKelvinSign(t *testing.T) {
	f := newFixture(t)
	for key, refused := range map[string]bool{
		".cloudmem/crypt-\u212aey":  true,
		".CLOUDMEM/Crypt-\u212aEY":  true,
		".CloudMem/CRYPT-KEY":       true,
		".cloudmem/crypt-\u0137ey":  false, // k with cedilla
		".cloudmem/crypt-\u212aeys": false,
	} {
		_, err := f.store.Put(t.Context(), key, []byte("x"), blob.Cond{})
		if got := errors.Is(err, blob.ErrInvalidKey); got != refused || refused != blob.EqualFold(key, blob.EncryptionKeyName) {
			t.Errorf("Put(%q) = %v; refused %v, want %v", key, err, got, refused)
		}
	}
}

// The key object's name in another case of its letters is refused too: a
// case-insensitive file system (macOS, Windows) keeps ".CLOUDMEM/Crypt-Key"
// at the key object, so a Put there would replace the key every object
// needs. A DeleteTree of the tree that holds it, in any case, spares it.
func TestKeyObjectIsReservedInAnyCase(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	for _, key := range []string{".CLOUDMEM/crypt-key", ".cloudmem/Crypt-Key"} {
		_, err := f.store.Put(ctx, key, []byte("x"), blob.Cond{})
		wantInvalid(t, "Put "+key, err)
		wantInvalid(t, "Delete "+key, f.store.Delete(ctx, key, blob.Cond{}))
	}
	put(t, f.store, ".CloudMem/other", []byte("o"))
	counter := blob.NewCounter(f.inner)
	s := wrap(t, counter, config([]testKey{f.app}, f.app))
	if err := blob.DeleteTree(ctx, s, ".CloudMem"); err != nil {
		t.Fatalf("DeleteTree(.CloudMem): %v", err)
	}
	if n := counter.Counts().DeleteTree; n != 0 {
		t.Fatalf("DeleteTree(.CloudMem) went to the inner store's DeleteTree (%d calls), which would delete the key object on a case-insensitive file system", n)
	}
}
