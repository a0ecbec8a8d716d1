package search_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/search"
)

// TestCacheFile keeps the index in a file: a second index over the same
// store reads nothing but the listing; after changes behind its back it
// reads what changed; and the file is private to its owner.
func TestCacheFile(t *testing.T) {
	ctx := context.Background()
	s, err := file.Open(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		put(t, s, map[string]string{fmt.Sprintf("d/f%02d.md", i): fmt.Sprintf("file %d of thirty\n", i)})
	}
	put(t, s, map[string]string{"big.md": "large file\n" + string(make([]byte, 200)), "img.png": "\xff\xfe"})
	cache := filepath.Join(t.TempDir(), "index")
	c := blob.NewCounter(s)
	step := func(what string, want blob.Counts, query string, wantFiles int) {
		t.Helper()
		x, err := search.Open(c, &search.Options{CacheFile: cache, MaxFileBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		c.Reset()
		if err := x.Refresh(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := c.Counts(); got != want {
			t.Errorf("%s: %+v, want %+v", what, got, want)
		}
		if got := paths(t, x, query); len(got) != wantFiles {
			t.Errorf("%s: %d files hold %q, want %d: %v", what, len(got), query, wantFiles, got)
		}
	}
	step("no file yet: a build", blob.Counts{List: 1, Get: 31}, "thirty", 30)
	st, err := os.Stat(cache)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("the index file has mode %v, want 0600", st.Mode().Perm())
	}
	step("from the file", blob.Counts{List: 1}, "thirty", 30)
	put(t, s, map[string]string{"d/f07.md": "changed\n", "new.md": "thirty and one\n"})
	if err := s.Delete(ctx, "d/f09.md", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	step("two written, one deleted", blob.Counts{List: 1, Get: 2}, "thirty", 29)
	step("from the file again", blob.Counts{List: 1}, "changed", 1)

	if err := os.WriteFile(cache, []byte("not an index"), 0o600); err != nil {
		t.Fatal(err)
	}
	step("a damaged file: a build", blob.Counts{List: 1, Get: 31}, "thirty", 29)
	entries, _ := os.ReadDir(filepath.Dir(cache))
	if len(entries) != 1 {
		t.Errorf("%d files beside the index file, want none: %v", len(entries)-1, entries)
	}
}

// TestCacheFileOfAnotherStore gives an index the file of another store
// whose keys and versions are the same (a version counter starting anew):
// the sizes and times tell them apart, and it finds the store's text.
func TestCacheFileOfAnotherStore(t *testing.T) {
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "index")
	a, b := mem.New(nil), mem.New(nil)
	put(t, a, map[string]string{"n.md": "alpha\n"})
	time.Sleep(time.Millisecond)
	put(t, b, map[string]string{"n.md": "gamma\n"})
	ia, _ := a.Stat(ctx, "n.md")
	ib, _ := b.Stat(ctx, "n.md")
	if ia.Version != ib.Version {
		t.Fatalf("the two stores' versions differ (%q, %q): the test proves nothing", ia.Version, ib.Version)
	}
	if err := search.New(a, &search.Options{CacheFile: cache}).Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	x := search.New(b, &search.Options{CacheFile: cache})
	if got := paths(t, x, "alpha"); len(got) != 0 {
		t.Errorf("found the other store's text: %v", got)
	}
	if got := paths(t, x, "gamma"); !equal(got, []string{"/memories/n.md"}) {
		t.Errorf("gamma: %v", got)
	}
}

// TestCacheFileEncrypted refuses an index file on an encrypted store, and
// on a mount table with an encrypted mount: Open says so, an index made
// by New fails every call, and no file is written.
func TestCacheFileEncrypted(t *testing.T) {
	ctx := context.Background()
	identity, recipient, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := crypt.ParseIdentities(identity)
	rs, _ := crypt.ParseRecipients(recipient)
	enc, err := crypt.Wrap(mem.New(nil), crypt.Config{Recipients: rs, Identities: ids})
	if err != nil {
		t.Fatal(err)
	}
	put(t, enc, map[string]string{"secret.md": "zebracorn\n"})
	table, err := mount.New([]mount.Mount{{Name: "plain", Store: mem.New(nil)}, {Name: "secret", Store: enc}})
	if err != nil {
		t.Fatal(err)
	}
	prefixed, err := blob.Prefix(enc, "tenant")
	if err != nil {
		t.Fatal(err)
	}
	const text = "search: an index file is refused on an encrypted store: the index holds the files' plain text"
	for name, s := range map[string]blob.Store{"crypt": enc, "mount table": table, "prefixed": prefixed} {
		cache := filepath.Join(t.TempDir(), "index")
		opts := &search.Options{CacheFile: cache}
		if x, err := search.Open(s, opts); x != nil || !errors.Is(err, search.ErrEncryptedCache) || err.Error() != text {
			t.Errorf("%s: Open: %v, %v", name, x, err)
		}
		x := search.New(s, opts)
		if err := x.Refresh(ctx); !errors.Is(err, search.ErrEncryptedCache) {
			t.Errorf("%s: Refresh: %v", name, err)
		}
		if _, err := x.Search(ctx, search.Request{Query: "zebracorn"}); !errors.Is(err, search.ErrEncryptedCache) {
			t.Errorf("%s: Search: %v", name, err)
		}
		if _, err := os.Stat(cache); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the index file exists: %v", name, err)
		}
		if _, err := search.Open(s, nil); err != nil { // in memory: allowed
			t.Errorf("%s: without a file: %v", name, err)
		}
	}
}

// TestCacheFileError: an index file that cannot be written leaves the
// Search's results as they are; CacheFileError and Refresh say why, naming
// the file given, and the next refresh writes it once it can.
func TestCacheFileError(t *testing.T) {
	ctx := context.Background()
	s := mem.New(nil)
	put(t, s, map[string]string{"a.md": "alpha\n"})
	dir := filepath.Join(t.TempDir(), "later")
	cache := filepath.Join(dir, "index")
	x := search.New(s, &search.Options{CacheFile: cache, MaxAge: -1})
	if err := x.CacheFileError(); err != nil {
		t.Errorf("before any write: %v", err)
	}
	if got := paths(t, x, "alpha"); !equal(got, []string{"/memories/a.md"}) {
		t.Errorf("found %v", got)
	}
	want := "search: writing the index file " + cache + ": no such file or directory"
	if err := x.CacheFileError(); !errors.Is(err, search.ErrCacheWrite) || err.Error() != want {
		t.Errorf("CacheFileError() = %v, want %q", err, want)
	}
	if err := x.Refresh(ctx); !errors.Is(err, search.ErrCacheWrite) || err.Error() != want {
		t.Errorf("Refresh() = %v, want %q", err, want)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := x.Refresh(ctx); err != nil {
		t.Errorf("Refresh() once the directory exists: %v", err)
	}
	if _, err := os.Stat(cache); err != nil || x.CacheFileError() != nil {
		t.Errorf("the index file: %v; CacheFileError() = %v", err, x.CacheFileError())
	}
}
