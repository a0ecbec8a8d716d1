//go:build unix

package file_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/storeurl"
)

// newLazy returns a store over a directory that does not exist yet, opened
// with CreateOnWrite.
func newLazy(t *testing.T) blob.Store {
	dir := filepath.Join(t.TempDir(), "later")
	s, err := file.Open(t.Context(), dir, &file.Options{NoSync: true, CreateOnWrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open with CreateOnWrite made %s: %v", dir, err)
	}
	t.Cleanup(func() { blob.Close(s) })
	return s
}

func TestCreateOnWriteSuite(t *testing.T) {
	blobtest.Run(t, newLazy)
}

func TestCreateOnWriteSpec(t *testing.T) {
	memorytest.Run(t, newLazy)
}

// TestCreateOnWriteTraits checks that the store of a missing directory
// reports the file store's Traits and has its capabilities.
func TestCreateOnWriteTraits(t *testing.T) {
	s := newLazy(t)
	want := blob.Traits{KeyBudget: blob.MaxKeyLen, ExclusiveNames: true}
	if got := blob.TraitsOf(s); got.KeyBudget != want.KeyBudget || !got.ExclusiveNames {
		t.Errorf("Traits before the first write = %+v, want %+v", got, want)
	}
	for _, capability := range []struct {
		name string
		ok   bool
	}{
		{"Tree", is[blob.Tree](s)}, {"Locker", is[blob.Locker](s)},
	} {
		if !capability.ok {
			t.Errorf("the store of a missing directory is no blob.%s", capability.name)
		}
	}
}

func is[T any](s blob.Store) bool { _, ok := s.(T); return ok }

// TestURLMissingDirectory opens a file URL of a directory that does not
// exist: read-write it reads as empty and the first write creates it;
// read-only it is refused with ErrNoStore, and nothing is created.
func TestURLMissingDirectory(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "no", "store")
	for _, raw := range []string{dir, "file:" + dir, (&url.URL{Scheme: "file", Path: dir, RawQuery: "readonly=true"}).String()} {
		_, err := storeurl.OpenReadOnly(ctx, raw)
		if want := "the store does not exist: no directory " + dir + " (the first write creates it)"; err == nil || err.Error() != want || !errors.Is(err, file.ErrNoStore) {
			t.Errorf("OpenReadOnly(%q) = %v, want %q", raw, err, want)
		}
	}
	if _, err := storeurl.Open(ctx, "file:"+dir+"?readonly=true"); !errors.Is(err, file.ErrNoStore) {
		t.Errorf("Open with readonly=true = %v, want ErrNoStore", err)
	}
	s, err := storeurl.Open(ctx, "file:"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Close(s)
	if infos, err := blob.ListAll(ctx, s, ""); err != nil || len(infos) != 0 {
		t.Errorf("List of the missing directory = %v, %v; want nothing", infos, err)
	}
	if _, _, err := s.Get(ctx, "a.md", 10); !errors.Is(err, blob.ErrNotExist) {
		t.Errorf("Get = %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Dir(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reads made %s: %v", filepath.Dir(dir), err)
	}
	if _, err := s.Put(ctx, "a.md", []byte("hi"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a.md")); err != nil || string(data) != "hi" {
		t.Errorf("%s/a.md holds %q, %v; want \"hi\"", dir, data, err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the created directory: %v, %v; want mode 0700", fi, err)
	}
}

// A create-on-write store's Lock, before and after its directory exists:
// a done context and an invalid key are refused every time, and the locks
// of the process are dropped once nobody holds or waits for them.
func TestCreateOnWriteLock(t *testing.T) {
	s := newLazy(t)
	l := s.(blob.Locker)
	done, cancel := context.WithCancel(t.Context())
	cancel()
	for _, phase := range []string{"before the directory", "after it"} {
		for i := range 100 {
			if unlock, err := l.Lock(done, "k"); !errors.Is(err, context.Canceled) {
				if err == nil {
					unlock()
				}
				t.Fatalf("%s, try %d: Lock with a done context = %v, want context.Canceled", phase, i, err)
			}
		}
		if _, err := l.Lock(t.Context(), "../k"); !errors.Is(err, blob.ErrInvalidKey) {
			t.Fatalf("%s: Lock of an invalid key = %v, want ErrInvalidKey", phase, err)
		}
		for i := range 50 {
			unlock, err := l.Lock(t.Context(), fmt.Sprintf("k%d", i))
			if err != nil {
				t.Fatalf("%s: Lock: %v", phase, err)
			}
			unlock()
		}
		if n := file.LockedKeys(s); n != 0 {
			t.Fatalf("%s: %d keys' locks kept after every unlock, want none", phase, n)
		}
		if _, err := s.Put(t.Context(), "made", []byte("x"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
}
