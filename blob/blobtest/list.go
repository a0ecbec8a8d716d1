package blobtest

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// listTests cover List: order, prefixes, paging and early stops.
var listTests = []test{
	{"ListOrder", testListOrder},
	{"ListPrefix", testListPrefix},
	{"ListInfo", testListInfo},
	{"ListVersionMatchesStat", testListVersionMatchesStat},
	{"ListInvalidPrefix", testListInvalidPrefix},
	{"ListMany", testListMany},
	{"ListBreak", testListBreak},
	{"KeyAndTreeCoexist", testKeyAndTreeCoexist},
}

func testListOrder(t *testing.T, s blob.Store) {
	// A walk of the directory tree a/ would yield a/b before a-c and a.d
	// (and a/x/c before a/x-y); byte order puts '-' (0x2d) and '.' (0x2e)
	// before '/' (0x2f), and '0' (0x30) after it.
	keys := []string{"a0", "a/b", "a.d", "a-c", "a/x/c", "a/x-y", "a/x.z", "a/x0", "B", "b", "\u00e9", "e\u0301", "~", "a/ b", "a/_"}
	putAll(t, s, keys...)
	want := slices.Clone(keys)
	slices.Sort(want)
	wantKeys(t, s, "", want...)
	if want[0] != "B" || want[len(want)-1] != "\u00e9" {
		t.Fatalf("blobtest bug: byte order is %q", want)
	}
}

func testListPrefix(t *testing.T, s blob.Store) {
	putAll(t, s, "ab", "a/b", "a/c/d", "a-c", "abc/d", "b/a", "ba")
	wantKeys(t, s, "", "a-c", "a/b", "a/c/d", "ab", "abc/d", "b/a", "ba")
	wantKeys(t, s, "a", "a-c", "a/b", "a/c/d", "ab", "abc/d")
	wantKeys(t, s, "a/", "a/b", "a/c/d")
	wantKeys(t, s, "a/c", "a/c/d")
	wantKeys(t, s, "a/c/", "a/c/d")
	wantKeys(t, s, "ab", "ab", "abc/d")
	wantKeys(t, s, "ab/")
	wantKeys(t, s, "abc", "abc/d")
	wantKeys(t, s, "b", "b/a", "ba")
	wantKeys(t, s, "b/", "b/a")
	wantKeys(t, s, "c")
	wantKeys(t, s, "c/")
	wantKeys(t, s, "a/c/d", "a/c/d")
	wantKeys(t, s, "a/c/d/")
}

// testListInfo checks the sizes a listing reports, and that a listed
// version works as an IfVersion condition (a stale one does not).
func testListInfo(t *testing.T, s blob.Store) {
	data := map[string]string{"x": "", "y/z": "twelve bytes", "y/zz": "binary\x00\xff"}
	for k, v := range data {
		put(t, s, k, []byte(v))
	}
	infos := listInfos(t, s, "")
	if len(infos) != len(data) {
		t.Fatalf("List yielded %d objects, want %d", len(infos), len(data))
	}
	for _, info := range infos {
		if info.Size != int64(len(data[info.Key])) || info.Version == "" {
			t.Errorf("List Info of %q = {Size:%d Version:%q}, want {Size:%d Version:<non-empty>}",
				info.Key, info.Size, info.Version, len(data[info.Key]))
		}
	}
	listed := infos[0]
	if _, err := s.Put(t.Context(), listed.Key, []byte("new"), blob.Cond{IfVersion: listed.Version}); err != nil {
		t.Fatalf("Put(%q, IfVersion: the listed version) = %v, want success", listed.Key, err)
	}
	if _, err := s.Put(t.Context(), listed.Key, []byte("newer"), blob.Cond{IfVersion: listed.Version}); !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(%q, IfVersion: the listed version, now stale) = %v, want ErrPrecondition", listed.Key, err)
	}
}

// testListVersionMatchesStat checks that a listing reports the same version
// spelling as Stat. Stores whose listings cannot carry the full version
// (S3: no user metadata in ListObjectsV2) skip this one.
func testListVersionMatchesStat(t *testing.T, s blob.Store) {
	for _, k := range []string{"x", "y/z"} {
		put(t, s, k, []byte(k))
	}
	for _, info := range listInfos(t, s, "") {
		st, err := s.Stat(t.Context(), info.Key)
		if err != nil {
			t.Fatalf("Stat(%q) of a listed key: %v", info.Key, err)
		}
		if info.Version != st.Version {
			t.Errorf("List version of %q = %q, Stat's = %q; want equal", info.Key, info.Version, st.Version)
		}
	}
}

func testListInvalidPrefix(t *testing.T, s blob.Store) {
	putAll(t, s, "a/b")
	for _, prefix := range []string{"/", "/a", "a//", "a//b", ".", "./", "..", "../", "a/./", "a/../", "nul\x00", "bad\xff"} {
		n := 0
		var last error
		for _, err := range s.List(t.Context(), prefix) {
			n++
			last = err
		}
		if n != 1 || !errors.Is(last, blob.ErrInvalidKey) {
			t.Fatalf("List(%q) yielded %d values, the last with error %v; want one error wrapping ErrInvalidKey", prefix, n, last)
		}
	}
}

// manyKeys is over 1,000, the page size of S3, GCS and Azure listings.
const manyKeys = 1100

func testListMany(t *testing.T, s blob.Store) {
	keys := make([]string, manyKeys)
	for i := range keys {
		// Mixed depths and a number that does not sort numerically.
		keys[i] = fmt.Sprintf("many/%d/k%d", i%7, i)
	}
	putConcurrently(t, s, keys)
	want := slices.Clone(keys)
	slices.Sort(want)
	wantKeys(t, s, "", want...)
	wantKeys(t, s, "many/", want...)
	var sub []string
	for _, k := range want {
		if len(k) > 7 && k[:7] == "many/3/" {
			sub = append(sub, k)
		}
	}
	wantKeys(t, s, "many/3/", sub...)
}

// putConcurrently writes each key (its data is the key) with 8 workers.
func putConcurrently(t *testing.T, s blob.Store, keys []string) {
	t.Helper()
	work := make(chan string)
	errs := make(chan error, len(keys))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for k := range work {
				if _, err := s.Put(t.Context(), k, []byte(k), blob.Cond{}); err != nil {
					errs <- fmt.Errorf("Put(%q): %w", k, err)
				}
			}
		})
	}
	for _, k := range keys {
		work <- k
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testListBreak(t *testing.T, s blob.Store) {
	keys := make([]string, 30)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%02d", i)
	}
	putConcurrently(t, s, keys)
	listFirst := func(n int) []string {
		var got []string
		for info, err := range s.List(t.Context(), "") {
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			got = append(got, info.Key)
			if len(got) == n {
				break
			}
		}
		return got
	}
	if got := listFirst(3); !slices.Equal(got, keys[:3]) {
		t.Fatalf("List stopped after 3 = %q, want %q", got, keys[:3])
	}
	// Abandoned listings must not leave goroutines behind. A few may come
	// and go (connection pools); one per abandoned listing is a leak.
	const abandoned = 25
	before := runtime.NumGoroutine()
	for range abandoned {
		listFirst(1)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+abandoned/5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+abandoned/5 {
		t.Fatalf("%d goroutines after %d abandoned listings, %d before", n, abandoned, before)
	}
	// The store still works after the abandoned listings.
	put(t, s, "k99", []byte("after"))
	wantKeys(t, s, "", append(slices.Clone(keys), "k99")...)
}

// testKeyAndTreeCoexist checks that "a" and "a/b" are unrelated keys, as the
// blob contract says. A store that keeps a name from being both
// (blob.Traits.ExclusiveNames: a file system, Redis) skips it, and
// ExclusiveNames checks the opposite.
func testKeyAndTreeCoexist(t *testing.T, s blob.Store) {
	if blob.TraitsOf(s).ExclusiveNames {
		t.Skip("the store reports blob.Traits.ExclusiveNames: a name is never both an object and a directory")
	}
	putAll(t, s, "a", "a/b", "ab", "a/b/c")
	wantKeys(t, s, "a", "a", "a/b", "a/b/c", "ab")
	wantKeys(t, s, "a/", "a/b", "a/b/c")
	wantContent(t, s, "a", []byte("data of a"))
	wantContent(t, s, "a/b", []byte("data of a/b"))
	if err := blob.DeleteTree(t.Context(), s, "a"); err != nil {
		t.Fatalf("DeleteTree(a): %v", err)
	}
	wantKeys(t, s, "", "a", "ab")
	if err := s.Delete(t.Context(), "a", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	putAll(t, s, "x/y", "x")
	if err := blob.Rename(t.Context(), s, "x", "moved"); err != nil {
		t.Fatalf("Rename(x, moved): %v", err)
	}
	// A key that exists is moved alone; its namesake directory stays.
	wantKeys(t, s, "", "ab", "moved", "x/y")
}
