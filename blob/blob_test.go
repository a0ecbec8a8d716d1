package blob_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

// plain hides every capability of the store it embeds, so that blob.Rename
// and blob.DeleteTree take their portable fallbacks.
type plain struct{ blob.Store }

// prefixSkips are the subtests a prefixed store cannot pass as written.
var prefixSkips = blobtest.Options{Skip: map[string]string{
	"MaxLenKey": "the prefix takes 4 of the MaxKeyLen bytes; TestPrefixKeyLength checks the shorter limit",
}}

func TestSuiteMem(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return mem.New(nil) })
}

func TestSuitePlainWrapper(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return plain{mem.New(nil)} })
}

func TestSuitePrefix(t *testing.T) {
	blobtest.RunWith(t, func(t *testing.T) blob.Store { return mustPrefix(t, mem.New(nil), "p/q") }, prefixSkips)
}

func TestSuitePrefixOverPlainWrapper(t *testing.T) {
	blobtest.RunWith(t, func(t *testing.T) blob.Store { return mustPrefix(t, plain{mem.New(nil)}, "p/q") }, prefixSkips)
}

func TestSuiteCounter(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.NewCounter(mem.New(nil)) })
}

func TestSuiteCounterOverPlainWrapper(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.NewCounter(plain{mem.New(nil)}) })
}

func TestSuiteReadOnly(t *testing.T) {
	blobtest.RunReadOnly(t, func(t *testing.T, objects map[string][]byte) blob.Store {
		return blob.ReadOnly(seeded(t, mem.New(nil), objects))
	})
}

func TestSuiteReadOnlyPrefix(t *testing.T) {
	blobtest.RunReadOnly(t, func(t *testing.T, objects map[string][]byte) blob.Store {
		return mustPrefix(t, blob.ReadOnly(seeded(t, mem.New(nil), prefixed("p/q/", objects))), "p/q")
	})
}

func mustPrefix(t *testing.T, s blob.Store, prefix string) blob.Store {
	t.Helper()
	p, err := blob.Prefix(s, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func seeded(t *testing.T, s blob.Store, objects map[string][]byte) blob.Store {
	t.Helper()
	for k, data := range objects {
		if _, err := s.Put(t.Context(), k, data, blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func prefixed(prefix string, objects map[string][]byte) map[string][]byte {
	out := map[string][]byte{}
	for k, v := range objects {
		out[prefix+k] = v
	}
	return out
}

func keysOf(t *testing.T, s blob.Store, prefix string) string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, prefix)
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	keys := make([]string, len(infos))
	for i, info := range infos {
		keys[i] = info.Key
	}
	return strings.Join(keys, " ")
}

func TestPrefixIsolation(t *testing.T) {
	ctx := t.Context()
	inner := seeded(t, mem.New(nil), map[string][]byte{
		"outside": []byte("o"), "p/qx": []byte("o"), "p/q": []byte("o"), "p/r/s": []byte("o"), "p/q/in": []byte("in"),
	})
	p := mustPrefix(t, inner, "/p/q/") // slashes around the prefix are trimmed
	if got := keysOf(t, p, ""); got != "in" {
		t.Fatalf("prefixed List(\"\") = %q, want \"in\"", got)
	}
	for _, key := range []string{"outside", "qx", "p/qx", "p/q/in"} {
		if _, _, err := p.Get(ctx, key, blob.MaxObjectBytes); !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("prefixed Get(%q) error = %v, want ErrNotExist", key, err)
		}
	}
	for _, key := range []string{"../outside", "../qx", "..", "/outside", "a//b"} {
		if _, _, err := p.Get(ctx, key, blob.MaxObjectBytes); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("prefixed Get(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if _, err := p.Put(ctx, key, []byte("x"), blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("prefixed Put(%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := p.Put(ctx, "new", []byte("n"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := blob.Rename(ctx, p, "in", "moved/in"); err != nil {
		t.Fatal(err)
	}
	if err := blob.DeleteTree(ctx, p, "moved"); err != nil {
		t.Fatal(err)
	}
	if got, want := keysOf(t, inner, ""), "outside p/q p/q/new p/qx p/r/s"; got != want {
		t.Fatalf("inner keys = %q, want %q", got, want)
	}
	for _, prefix := range []string{"", "/", "a//b", "..", "a/../b"} {
		if _, err := blob.Prefix(inner, prefix); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Prefix(%q) error = %v, want ErrInvalidKey", prefix, err)
		}
	}
}

func TestPrefixKeyLength(t *testing.T) {
	p := mustPrefix(t, mem.New(nil), "p/q") // "p/q/" takes 4 bytes
	seg := strings.Repeat("k", 204)
	longest := strings.Join([]string{seg, seg, seg, seg, seg[:200]}, "/")
	if len(longest) != blob.MaxKeyLen-4 {
		t.Fatalf("test bug: %d bytes", len(longest))
	}
	if _, err := p.Put(t.Context(), longest, []byte("x"), blob.Cond{}); err != nil {
		t.Fatalf("Put of a %d-byte key: %v", len(longest), err)
	}
	if _, err := p.Put(t.Context(), longest+"k", []byte("x"), blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("Put of a %d-byte key: error = %v, want ErrInvalidKey", len(longest)+1, err)
	}
}

func TestCounterCounts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inner blob.Store
		want  blob.Counts
	}{
		// Both runs make the same calls: three Puts, a Get, two Stats, a
		// List, a Delete of a missing key, a file Rename, a DeleteTree.
		// mem renames and deletes trees itself: one capability call each.
		{"capable", mem.New(nil), blob.Counts{Get: 1, Stat: 2, Put: 3, Delete: 1, List: 1, Rename: 1, DeleteTree: 1}},
		// The fallbacks go through the Counter: the file rename is Get,
		// List (is dst a tree?), Put, Delete; the tree delete is List and
		// one Delete per object.
		{"fallback", plain{mem.New(nil)}, blob.Counts{Get: 2, Stat: 2, Put: 4, Delete: 4, List: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			c := blob.NewCounter(tc.inner)
			for _, k := range []string{"a", "d/b", "d/c"} {
				if _, err := c.Put(ctx, k, []byte(k), blob.Cond{}); err != nil {
					t.Fatal(err)
				}
			}
			_, _, _ = c.Get(ctx, "a", blob.MaxObjectBytes)
			_, _ = c.Stat(ctx, "a")
			_, _ = c.Stat(ctx, "missing")
			if got := keysOf(t, c, ""); got != "a d/b d/c" {
				t.Fatalf("List = %q", got)
			}
			_ = c.Delete(ctx, "missing", blob.Cond{})
			if err := blob.Rename(ctx, c, "a", "e"); err != nil {
				t.Fatal(err)
			}
			if err := blob.DeleteTree(ctx, c, "d"); err != nil {
				t.Fatal(err)
			}
			if got := c.Counts(); got != tc.want {
				t.Fatalf("Counts = %+v, want %+v", got, tc.want)
			}
			if got := c.Counts().Total(); got != total(tc.want) {
				t.Fatalf("Total = %d, want %d", got, total(tc.want))
			}
			c.Reset()
			if got := c.Counts(); got != (blob.Counts{}) {
				t.Fatalf("Counts after Reset = %+v", got)
			}
		})
	}
}

func total(c blob.Counts) int64 {
	return c.Get + c.Stat + c.Put + c.Delete + c.List + c.Rename + c.DeleteTree + c.Copy + c.DeleteBatch
}

// A Counter forwards the inner store's BatchDeleter and counts one call per
// batch; over a store without one, blob.DeleteKeys falls back through the
// Counter and each Delete is counted.
func TestCounterDeleteKeys(t *testing.T) {
	for _, tc := range []struct {
		unsupported bool
		want        blob.Counts
		batches     int
	}{
		{false, blob.Counts{DeleteBatch: 1}, 1},
		{true, blob.Counts{Delete: 2}, 0},
	} {
		inner := mem.New(nil)
		seedKeys(t, inner, "a", "b", "keep")
		b := &batcher{Store: inner, unsupported: tc.unsupported}
		c := blob.NewCounter(b)
		if err := blob.DeleteKeys(t.Context(), c, []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
		if got := c.Counts(); got != tc.want || len(b.batches) != tc.batches {
			t.Errorf("unsupported=%v: Counts = %+v and %d batches, want %+v and %d", tc.unsupported, got, len(b.batches), tc.want, tc.batches)
		}
		if got, want := storeKeys(t, inner), []string{"keep"}; !slices.Equal(got, want) {
			t.Errorf("unsupported=%v: left %v, want %v", tc.unsupported, got, want)
		}
	}
}

func TestCheckKey(t *testing.T) {
	seg255 := strings.Repeat("s", 255)
	longest := strings.Repeat("m", blob.MaxKeyLen)
	for _, tc := range []struct {
		key   string
		valid bool
	}{
		{"a", true},
		{"a/b/c.md", true},
		{".hidden/.x", true},
		{"...", true},
		{"a b/c%20d+e#f?g&h=i~'\"*:@!", true},
		{"caf\u00e9/cafe\u0301", true},
		{"C1\u0085", true},
		{seg255, true},
		{longest, true},
		{longest + "m", false},
		{"", false},
		{"/", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{".", false},
		{"..", false},
		{"a/.", false},
		{"./a", false},
		{"a/../b", false},
		{"a\x00b", false},
		{"a\x1fb", false},
		{"a\x7fb", false},
		{"\xff", false},
		{"a\xc3", false},
	} {
		err := blob.CheckKey(tc.key)
		if tc.valid && err != nil {
			t.Errorf("CheckKey(%q) = %v, want nil", tc.key, err)
		}
		if !tc.valid && !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("CheckKey(%q) = %v, want ErrInvalidKey", tc.key, err)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		valid  bool
	}{
		{"", true},
		{"a", true},
		{"a/", true},
		{"a/b", true},
		{"a/b/", true},
		{"/", false},
		{"a//", false},
		{"//", false},
		{"/a", false},
		{"../", false},
		{"a/./", false},
		{"a\x00/", false},
	} {
		err := blob.CheckPrefix(tc.prefix)
		if tc.valid && err != nil {
			t.Errorf("CheckPrefix(%q) = %v, want nil", tc.prefix, err)
		}
		if !tc.valid && !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("CheckPrefix(%q) = %v, want ErrInvalidKey", tc.prefix, err)
		}
	}
}

// faulty is a capability-less store whose k-th Put or k-th Delete fails.
type faulty struct {
	blob.Store
	failPut, failDelete int64 // 1-based; 0 means never
	puts, deletes       atomic.Int64
}

var errInjected = errors.New("injected fault")

func (f *faulty) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if f.puts.Add(1) == f.failPut {
		return blob.Info{}, fmt.Errorf("put %q: %w", key, errInjected)
	}
	return f.Store.Put(ctx, key, data, c)
}

func (f *faulty) Delete(ctx context.Context, key string, c blob.Cond) error {
	if f.deletes.Add(1) == f.failDelete {
		return fmt.Errorf("delete %q: %w", key, errInjected)
	}
	return f.Store.Delete(ctx, key, c)
}

func TestRenameFallbackFaults(t *testing.T) {
	files := []string{"a", "b/c", "b/d/e", "f", "g/h"} // under src/
	for _, fail := range []string{"Put", "Delete"} {
		for k := int64(1); k <= int64(len(files)); k++ {
			t.Run(fmt.Sprintf("%s%d", fail, k), func(t *testing.T) {
				ctx := t.Context()
				inner := mem.New(nil)
				for _, f := range files {
					if _, err := inner.Put(ctx, "src/"+f, []byte("content of "+f), blob.Cond{}); err != nil {
						t.Fatal(err)
					}
				}
				s := &faulty{Store: inner}
				if fail == "Put" {
					s.failPut = k
				} else {
					s.failDelete = k
				}
				if err := blob.Rename(ctx, s, "src", "dst"); !errors.Is(err, errInjected) {
					t.Fatalf("Rename error = %v, want the injected fault", err)
				}
				for _, f := range files {
					_, srcErr := getContent(t, inner, "src/"+f, "content of "+f)
					dstFound, dstErr := getContent(t, inner, "dst/"+f, "content of "+f)
					if srcErr != nil && dstErr != nil {
						t.Errorf("%q is lost: %v; %v", f, srcErr, dstErr)
					}
					// A failed copy removes every copy; a failed delete
					// comes after every copy was made.
					if fail == "Put" && dstFound {
						t.Errorf("copy dst/%s was left after a failed copy", f)
					}
					if fail == "Delete" && !dstFound {
						t.Errorf("dst/%s is missing after the copy phase completed", f)
					}
				}
			})
		}
	}
}

// getContent reports whether key exists, and an error unless it holds want.
func getContent(t *testing.T, s blob.Store, key, want string) (bool, error) {
	t.Helper()
	data, _, err := s.Get(t.Context(), key, blob.MaxObjectBytes)
	switch {
	case errors.Is(err, blob.ErrNotExist):
		return false, err
	case err != nil:
		t.Fatalf("Get(%q): %v", key, err)
	case string(data) != want:
		t.Fatalf("Get(%q) = %q, want %q", key, data, want)
	}
	return true, nil
}
