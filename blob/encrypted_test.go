package blob_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

func TestSuiteRefuseEncrypted(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.RefuseEncrypted(mem.New(nil)) })
}

func TestSuiteRefuseEncryptedOverPlainWrapper(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.RefuseEncrypted(plain{mem.New(nil)}) })
}

// TestRefuseEncrypted opens a store holding the encryption key object
// without encryption: every call fails with ErrEncrypted and changes
// nothing.
func TestRefuseEncrypted(t *testing.T) {
	ctx := t.Context()
	inner := seeded(t, mem.New(nil), map[string][]byte{
		blob.EncryptionKeyName: []byte("ciphertext of the key"),
		"a/b.md":               []byte("ciphertext of a note"),
	})
	s := blob.RefuseEncrypted(inner)
	var errs []error
	data, _, err := s.Get(ctx, "a/b.md", 100)
	if data != nil {
		t.Errorf("Get returned %q", data)
	}
	errs = append(errs, err)
	_, err = s.Stat(ctx, "a/b.md")
	errs = append(errs, err)
	_, err = s.Put(ctx, "a/c.md", []byte("plaintext"), blob.Cond{})
	errs = append(errs, err)
	errs = append(errs, s.Delete(ctx, "a/b.md", blob.Cond{}))
	for _, err := range s.List(ctx, "") {
		errs = append(errs, err)
	}
	errs = append(errs, blob.Rename(ctx, s, "a", "z"))
	errs = append(errs, blob.DeleteTree(ctx, s, "a"))
	for i, err := range errs {
		if !errors.Is(err, blob.ErrEncrypted) || err.Error() != "this store is encrypted; open it with encrypt=age" {
			t.Errorf("call %d: %v, want ErrEncrypted", i, err)
		}
	}
	var c interface{ ModelCause() string }
	if !errors.As(errs[0], &c) || c.ModelCause() != "this store is encrypted; open it with encrypt=age" {
		t.Errorf("ErrEncrypted is not a Causer with the text")
	}
	infos, err := blob.ListAll(ctx, inner, "")
	if err != nil || len(infos) != 2 || infos[0].Key != blob.EncryptionKeyName || infos[1].Key != "a/b.md" {
		t.Fatalf("inner store after the refused calls: %v, %v", infos, err)
	}
}

// statFails fails its first n Stat calls.
type statFails struct {
	blob.Store
	n int
}

func (s *statFails) Stat(ctx context.Context, key string) (blob.Info, error) {
	if s.n > 0 {
		s.n--
		return blob.Info{}, errStat
	}
	return s.Store.Stat(ctx, key)
}

var errStat = errors.New("stat failed for the test")

// TestRefuseEncryptedCheckFails: a failed check is the call's error and is
// not remembered; the answer of a successful one is.
func TestRefuseEncryptedCheckFails(t *testing.T) {
	ctx := t.Context()
	inner := &statFails{Store: mem.New(nil), n: 1}
	s := blob.RefuseEncrypted(inner)
	_, err := s.Put(ctx, "a", []byte("x"), blob.Cond{})
	if want := "blob: looking for the encryption key object: " + errStat.Error(); !errors.Is(err, errStat) || err.Error() != want {
		t.Fatalf("Put with a failing check: %v, want %q", err, want)
	}
	if _, err := s.Put(ctx, "a", []byte("x"), blob.Cond{}); err != nil {
		t.Fatalf("Put after the check recovered: %v", err)
	}
	// Remembered: a key object that appears later is not looked for again
	// (see the RefuseEncrypted doc).
	if _, err := inner.Put(ctx, blob.EncryptionKeyName, []byte("k"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.Get(ctx, "a", 10); err != nil || string(got) != "x" {
		t.Fatalf("Get = %q, %v", got, err)
	}
}

// TestRefuseEncryptedForwards checks the capabilities it forwards.
func TestRefuseEncryptedForwards(t *testing.T) {
	c := &closer{Store: mem.New(nil)}
	if err := blob.Close(blob.RefuseEncrypted(c)); !errors.Is(err, errClosed) || c.closed != 1 {
		t.Fatalf("Close = %v, closed %d times", err, c.closed)
	}
	if !blob.IsReadOnly(blob.RefuseEncrypted(blob.ReadOnly(mem.New(nil)))) {
		t.Fatal("ReadOnly not forwarded")
	}
	s := blob.RefuseEncrypted(mem.New(nil))
	if _, ok := s.(blob.Tree); !ok {
		t.Error("Tree not forwarded")
	}
	r, ok := s.(blob.Tree)
	if !ok {
		t.Fatal("Tree not forwarded")
	}
	if err := r.Rename(t.Context(), "x", "y"); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Rename of a missing key through the wrapper: %v, want the inner store's ErrNotExist", err)
	}
}

// Unguarded reaches the store beneath the guard, and leaves any other store
// as it is.
func TestUnguarded(t *testing.T) {
	inner := seeded(t, mem.New(nil), map[string][]byte{blob.EncryptionKeyName: []byte("k"), "a.md": []byte("ciphertext")})
	if got := blob.Unguarded(blob.RefuseEncrypted(inner)); got != inner {
		t.Fatalf("Unguarded(RefuseEncrypted(s)) = %T, want s", got)
	}
	data, _, err := blob.Unguarded(blob.RefuseEncrypted(inner)).Get(t.Context(), "a.md", 100)
	if err != nil || string(data) != "ciphertext" {
		t.Fatalf("Get beneath the guard: %q, %v", data, err)
	}
	ro := blob.ReadOnly(inner)
	if got := blob.Unguarded(ro); got != ro {
		t.Fatalf("Unguarded of a store that is no guard = %T, want the store itself", got)
	}
}
