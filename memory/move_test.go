package memory_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// hiding is a store without blob.Tree whose listing behaves
// like some object stores' on a name that is both an object and a prefix:
// it omits every key that lies under another key that exists as an object
// ("t/a/b" while "t/a" exists). The keys appear once that object is gone.
type hiding struct{ blob.Store }

func (h hiding) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		for info, err := range h.Store.List(ctx, prefix) {
			if err == nil && h.underObject(ctx, info.Key) {
				continue
			}
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}

func (h hiding) underObject(ctx context.Context, key string) bool {
	for i := range len(key) {
		if key[i] == '/' {
			if _, err := h.Store.Stat(ctx, key[:i]); err == nil {
				return true
			}
		}
	}
	return false
}

func handler(t *testing.T, s blob.Store) *memory.Handler {
	t.Helper()
	h, err := memory.New(s, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A name that is both a file and a directory, three levels deep, on a store
// whose listing hides what lies under an object: delete and rename of the
// directory above it still leave nothing behind, and say so truthfully.
func TestDualStateOverHidingListing(t *testing.T) {
	seed := map[string]string{"t/a": "1", "t/a/b": "2", "t/a/b/c": "3", "t/c": "4", "keep.md": "k"}
	newStore := func() (blob.Store, blob.Store) {
		inner := mem.New(nil)
		seedStore(t, inner, seed)
		return inner, hiding{coreOnly{inner}}
	}
	t.Run("delete", func(t *testing.T) {
		inner, s := newStore()
		if got, want := handler(t, s).Delete(t.Context(), "/memories/t").Text, "Successfully deleted /memories/t"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if got, want := contents(t, inner), map[string]string{"keep.md": "k"}; !maps.Equal(got, want) {
			t.Errorf("store afterwards: %v, want %v", got, want)
		}
	})
	t.Run("rename", func(t *testing.T) {
		inner, s := newStore()
		if got, want := handler(t, s).Rename(t.Context(), "/memories/t", "/memories/u").Text, "Successfully renamed /memories/t to /memories/u"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		want := map[string]string{"u/a": "1", "u/a/b": "2", "u/a/b/c": "3", "u/c": "4", "keep.md": "k"}
		if got := contents(t, inner); !maps.Equal(got, want) {
			t.Errorf("store afterwards: %v, want %v", got, want)
		}
	})
}

func seedStore(t *testing.T, s blob.Store, files map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(files)) {
		if _, err := s.Put(context.Background(), k, []byte(files[k]), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
}

var errCrashed = errors.New("injected crash: the process is gone")

// crashing fails the nth call of one method and every call after it, as a
// process killed at that moment makes no more calls (its rollback
// included).
type crashing struct {
	blob.Store
	method string
	nth    int

	mu      sync.Mutex
	calls   int
	crashed bool
}

func (c *crashing) call(method string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if method == c.method {
		c.calls++
		c.crashed = c.crashed || c.calls == c.nth
	}
	if c.crashed {
		return errCrashed
	}
	return nil
}

func (c *crashing) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if err := c.call("Get"); err != nil {
		return nil, blob.Info{}, err
	}
	return c.Store.Get(ctx, key, limit)
}

func (c *crashing) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := c.call("Stat"); err != nil {
		return blob.Info{}, err
	}
	return c.Store.Stat(ctx, key)
}

func (c *crashing) Put(ctx context.Context, key string, data []byte, cond blob.Cond) (blob.Info, error) {
	if err := c.call("Put"); err != nil {
		return blob.Info{}, err
	}
	return c.Store.Put(ctx, key, data, cond)
}

func (c *crashing) Delete(ctx context.Context, key string, cond blob.Cond) error {
	if err := c.call("Delete"); err != nil {
		return err
	}
	return c.Store.Delete(ctx, key, cond)
}

func (c *crashing) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	if err := c.call("List"); err != nil {
		return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, err) }
	}
	return c.Store.List(ctx, prefix)
}

// A directory rename by copy that crashes at any Put or Delete leaves every
// file at its old path, its new path or both; the same rename sent again
// completes the move instead of refusing the destination.
func TestRenameResumesAfterCrash(t *testing.T) {
	const n = 5
	for _, paths := range [][2]string{
		{"/memories/proj", "/memories/old-proj"},   // within the known tree
		{"/memories/a/proj", "/memories/b/c/proj"}, // elsewhere: probes first
	} {
		from, to := strings.TrimPrefix(paths[0], "/memories/"), strings.TrimPrefix(paths[1], "/memories/")
		seed := map[string]string{"a/keep.md": "k"}
		want := map[string]string{"a/keep.md": "k"}
		for i := range n {
			seed[fmt.Sprintf("%s/f%d.md", from, i)] = fmt.Sprintf("file %d", i)
			want[fmt.Sprintf("%s/f%d.md", to, i)] = fmt.Sprintf("file %d", i)
		}
		for _, method := range []string{"Put", "Delete"} {
			for nth := 1; nth <= n; nth++ {
				t.Run(fmt.Sprintf("%s/crash at %s %d", from, method, nth), func(t *testing.T) {
					inner := mem.New(nil)
					seedStore(t, inner, seed)
					crash := &crashing{Store: coreOnly{inner}, method: method, nth: nth}
					r := handler(t, crash).Rename(t.Context(), paths[0], paths[1])
					if !errors.Is(r.Err, memory.ErrStorage) || !errors.Is(r.Err, errCrashed) {
						t.Fatalf("the crashed rename: %q (Err %v), want a storage failure", r.Text, r.Err)
					}
					// Nothing lost: every file is at its old key, its new one or both.
					got := contents(t, inner)
					for i := range n {
						old, moved := fmt.Sprintf("%s/f%d.md", from, i), fmt.Sprintf("%s/f%d.md", to, i)
						if got[old] == "" && got[moved] == "" {
							t.Fatalf("after the crash, file %d is at neither %q nor %q: %v", i, old, moved, got)
						}
					}
					r = handler(t, coreOnly{inner}).Rename(t.Context(), paths[0], paths[1])
					if want := "Successfully renamed " + paths[0] + " to " + paths[1]; r.Text != want || r.IsError {
						t.Errorf("the retried rename: %q, want %q", r.Text, want)
					}
					if got := contents(t, inner); !maps.Equal(got, want) {
						t.Errorf("store after the retry:\n got %v\nwant %v", got, want)
					}
				})
			}
		}
	}
}

// A destination that holds something other than the copies of the source
// is still refused, and nothing changes.
func TestRenameOntoDifferentDirectoryRefused(t *testing.T) {
	for name, dst := range map[string]map[string]string{
		"different content": {"new/f0.md": "file 0", "new/f1.md": "changed"},
		"an extra file":     {"new/f0.md": "file 0", "new/other.md": "x"},
		"unrelated":         {"new/z.md": "z"},
	} {
		t.Run(name, func(t *testing.T) {
			inner := mem.New(nil)
			seed := map[string]string{"old/f0.md": "file 0", "old/f1.md": "file 1", "old/f2.md": "file 2"}
			seedStore(t, inner, seed)
			seedStore(t, inner, dst)
			before := contents(t, inner)
			r := handler(t, coreOnly{inner}).Rename(t.Context(), "/memories/old", "/memories/new")
			if want := "Error: The destination /memories/new already exists"; r.Text != want {
				t.Errorf("got %q, want %q", r.Text, want)
			}
			if got := contents(t, inner); !maps.Equal(got, before) {
				t.Errorf("the store changed:\n got %v\nwant %v", got, before)
			}
		})
	}
}

// capable is a store without blob.Tree that copies on the
// "server" (blob.Copier: the version checked, the destination created only
// when absent) and deletes sources in one batch (blob.BatchDeleter), the
// shape of S3 and GCS. Before the batch it runs edit, standing for another
// writer between the copies and the deletes.
type capable struct {
	blob.Store
	mu     sync.Mutex
	copies int
	edit   func()
}

func (c *capable) Copy(ctx context.Context, src, dst, srcVersion string) (blob.Info, error) {
	c.mu.Lock()
	c.copies++
	c.mu.Unlock()
	data, info, err := c.Store.Get(ctx, src, blob.MaxObjectBytes)
	if err != nil {
		return blob.Info{}, err
	}
	if info.Version != srcVersion {
		return blob.Info{}, fmt.Errorf("%q: %w: changed", src, blob.ErrPrecondition)
	}
	return c.Store.Put(ctx, dst, data, blob.Cond{IfAbsent: true})
}

func (c *capable) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	if c.edit != nil {
		c.edit()
		c.edit = nil
	}
	errs := make([]error, len(infos))
	for i, info := range infos {
		errs[i] = c.Store.Delete(ctx, info.Key, blob.Cond{IfVersion: info.Version})
	}
	return errs, nil
}

// A directory rename on a store with server-side copies and batched
// conditional deletes copies each file once on the server, and an edit
// landing between the copies and the deletes is carried over to the new
// path, not lost with the old one.
func TestRenameServerCopyCarriesEditOver(t *testing.T) {
	inner := mem.New(nil)
	seed := map[string]string{"old/a.md": "a", "old/b.md": "b", "old/c/d.md": "d"}
	seedStore(t, inner, seed)
	s := &capable{Store: inner}
	s.edit = func() {
		if _, err := inner.Put(t.Context(), "old/b.md", []byte("b, edited mid-move"), blob.Cond{}); err != nil {
			t.Error(err)
		}
	}
	r := handler(t, s).Rename(t.Context(), "/memories/old", "/memories/new")
	if want := "Successfully renamed /memories/old to /memories/new"; r.Text != want || r.IsError {
		t.Fatalf("rename: %q, want %q", r.Text, want)
	}
	want := map[string]string{"new/a.md": "a", "new/b.md": "b, edited mid-move", "new/c/d.md": "d"}
	if got := contents(t, inner); !maps.Equal(got, want) {
		t.Errorf("store after the rename:\n got %v\nwant %v", got, want)
	}
	if s.copies != len(seed) {
		t.Errorf("%d server-side copies, want %d", s.copies, len(seed))
	}
}

// afterPut calls after with each key it wrote, once the write landed.
type afterPut struct {
	blob.Store
	after func(key string)
}

func (s afterPut) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	info, err := s.Store.Put(ctx, key, data, c)
	if err == nil {
		s.after(key)
	}
	return info, err
}

// A delete of a file that lands while a copy-based rename (S3, GCS, Azure,
// encrypted stores) moves it, between the copy and the source's delete:
// both are acknowledged, the copy stays, and the delete takes its file off
// the file count. The rename then counts its copy again, so that the store,
// filled until a create is refused as full, holds MaxFiles files.
func TestRenameRacingADeleteKeepsTheLimit(t *testing.T) {
	ctx := t.Context()
	const maxFiles = 10
	inner := mem.New(nil)
	deleter := newHandler(t, coreOnly{inner}, memory.Options{MaxFiles: maxFiles})
	var deleted memory.Result
	s := afterPut{Store: coreOnly{inner}, after: func(key string) {
		if key == "b.md" {
			deleted = deleter.Delete(ctx, "/memories/a.md")
		}
	}}
	renamer := newHandler(t, s, memory.Options{MaxFiles: maxFiles})
	wantText(t, "create a.md", createX(ctx, renamer, "a.md"), "File created successfully at: /memories/a.md")
	wantText(t, "create o.md", createX(ctx, deleter, "o.md"), "File created successfully at: /memories/o.md")
	wantText(t, "rename", renamer.Rename(ctx, "/memories/a.md", "/memories/b.md"), "Successfully renamed /memories/a.md to /memories/b.md")
	wantText(t, "delete", deleted, "Successfully deleted /memories/a.md")
	createUntilFull(t, deleter, func(i int) string { return fmt.Sprintf("f%d.md", i) }, maxFiles)
	if files := len(memoryFiles(t, inner, "")); files != maxFiles {
		t.Errorf("the store holds %d files after a rename raced by a delete and creates until full, want max_files=%d", files, maxFiles)
	}
}
