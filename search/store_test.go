package search_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/search"
)

// paths returns the paths of the hits of a query.
func paths(t *testing.T, x *search.Index, q string) []string {
	t.Helper()
	res := search1(t, x, search.Request{Query: q, Limit: search.MaxLimit})
	out := []string{}
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	return out
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// TestConcurrentWriters starts writers and searchers, releases them at
// once, and checks that every acknowledged write is found by the next
// query of the same process, and by another index over the same store
// after one refresh.
func TestConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	s := mem.New(nil)
	x := search.New(s, &search.Options{MaxAge: time.Hour}) // only the Observer keeps it current
	h, err := memory.New(s, memory.Options{Observer: x.Observer(nil), MaxFiles: -1})
	if err != nil {
		t.Fatal(err)
	}
	search1(t, x, search.Request{Query: "warm"}) // built before the writers start
	// another process's index over the same store, built before too, so
	// that its refresh after the writes reads only what changed
	other := search.New(s, &search.Options{MaxAge: time.Hour})
	search1(t, other, search.Request{Query: "warm"})
	const writers, searchers = 16, 4
	var (
		start                  = make(chan struct{})
		wg                     sync.WaitGroup
		mu                     sync.Mutex
		acked, refused, missed int
	)
	for w := range writers {
		wg.Go(func() {
			<-start
			word := fmt.Sprintf("unique%02d", w)
			var res memory.Result
			if w%2 == 0 {
				res = h.Create(ctx, fmt.Sprintf("/memories/w%02d.md", w), "note "+word+"\n")
			} else { // a create, then an edit: the index must see the second version
				if r := h.Create(ctx, fmt.Sprintf("/memories/w%02d.md", w), "note placeholder\n"); r.IsError {
					t.Error(r.Text)
				}
				res = h.StrReplace(ctx, fmt.Sprintf("/memories/w%02d.md", w), "placeholder", word)
			}
			mu.Lock()
			defer mu.Unlock()
			if res.IsError {
				refused++
				return
			}
			acked++
			if got := paths(t, x, word); !equal(got, []string{fmt.Sprintf("/memories/w%02d.md", w)}) {
				missed++
				t.Errorf("after %s was acknowledged, the next query found %v", word, got)
			}
		})
	}
	for range searchers {
		wg.Go(func() {
			<-start
			for range 20 {
				search1(t, x, search.Request{Query: "note unique*"})
			}
		})
	}
	close(start)
	wg.Wait()
	if acked != writers || refused != 0 || missed != 0 {
		t.Errorf("acknowledged %d, refused %d, missed %d of %d writes", acked, refused, missed, writers)
	}
	all := paths(t, x, "unique*")
	if got := paths(t, other, "unique*"); len(got) != 0 {
		t.Errorf("the other index found %v before its refresh; want nothing (it has not looked)", got)
	}
	if err := other.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := paths(t, other, "unique*"); len(all) != writers || !equal(got, all) {
		t.Errorf("this process finds %d files, another after one refresh %v; want %d, the same", len(all), got, writers)
	}
}

// TestRequests counts the storage calls: the build reads every file once;
// a query on an unchanged store refreshed each time costs one listing; after
// one file changes, one listing and one read; after a write of this
// process, with no refresh due, one read.
func TestRequests(t *testing.T) {
	ctx := context.Background()
	inner := mem.New(nil)
	for i := range 50 {
		put(t, inner, map[string]string{fmt.Sprintf("d/f%02d.md", i): fmt.Sprintf("file %d of fifty\n", i)})
	}
	put(t, inner, map[string]string{".cloudmem/files": "50", ".hidden": "x"})
	c := blob.NewCounter(inner)
	x := search.New(c, &search.Options{MaxAge: -1})
	step := func(what string, want blob.Counts) {
		t.Helper()
		c.Reset()
		search1(t, x, search.Request{Query: "fifty"})
		if got := c.Counts(); got != want {
			t.Errorf("%s: %+v, want %+v", what, got, want)
		}
	}
	step("first query (build)", blob.Counts{List: 1, Get: 50})
	step("unchanged", blob.Counts{List: 1})
	put(t, inner, map[string]string{"d/f07.md": "changed\n"})
	step("one file changed", blob.Counts{List: 1, Get: 1})
	if _, err := inner.Put(ctx, "d/f08.md", []byte("x"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := inner.Delete(ctx, "d/f09.md", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	step("one changed, one deleted", blob.Counts{List: 1, Get: 1})
	if got := paths(t, x, "fifty"); len(got) != 47 {
		t.Errorf("%d files hold fifty, want 47", len(got))
	}

	y := search.New(c, &search.Options{MaxAge: time.Hour})
	h, err := memory.New(c, memory.Options{Observer: y.Observer(nil), MaxFiles: -1})
	if err != nil {
		t.Fatal(err)
	}
	search1(t, y, search.Request{Query: "x"})
	if res := h.StrReplace(ctx, "/memories/d/f10.md", "fifty", "sixty"); res.IsError {
		t.Fatal(res.Text)
	}
	c.Reset()
	if got := paths(t, y, "sixty"); !equal(got, []string{"/memories/d/f10.md"}) {
		t.Errorf("after str_replace: %v", got)
	}
	if got := c.Counts(); got != (blob.Counts{Get: 1}) {
		t.Errorf("query after a write of this process: %+v, want one Get", got)
	}
	if res := h.Delete(ctx, "/memories/d"); res.IsError {
		t.Fatal(res.Text)
	}
	if got := paths(t, y, "file"); len(got) != 0 {
		t.Errorf("after deleting the directory: %v", got)
	}
}

// TestBehindTheBack changes the store without the index knowing: it finds
// the change after a refresh, or when its MaxAge has passed.
func TestBehindTheBack(t *testing.T) {
	ctx := context.Background()
	s := mem.New(nil)
	put(t, s, map[string]string{"a.md": "alpha\n", "b.md": "beta\n"})
	x := search.New(s, &search.Options{MaxAge: time.Hour})
	young := search.New(s, &search.Options{MaxAge: 20 * time.Millisecond})
	if got := paths(t, x, "alpha beta gamma"); !equal(got, []string{"/memories/a.md", "/memories/b.md"}) {
		t.Fatalf("%v", got)
	}
	paths(t, young, "alpha")
	put(t, s, map[string]string{"a.md": "gamma\n", "c/d.md": "alpha beta\n"})
	if err := s.Delete(ctx, "b.md", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if got := paths(t, x, "alpha beta gamma"); !equal(got, []string{"/memories/a.md", "/memories/b.md"}) {
		t.Errorf("before the refresh, the index answers from what it read: %v", got)
	}
	if err := x.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"/memories/c/d.md", "/memories/a.md"}
	if got := paths(t, x, "alpha beta gamma"); !equal(got, want) {
		t.Errorf("after the refresh: %v, want %v", got, want)
	}
	time.Sleep(30 * time.Millisecond)
	if got := paths(t, young, "alpha beta gamma"); !equal(got, want) {
		t.Errorf("after MaxAge: %v, want %v", got, want)
	}
}

// TestEncrypted indexes an encrypted file store: it finds the plain text,
// and no byte of it reaches the directory unencrypted.
func TestEncrypted(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fileStore, err := file.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	identity, recipient, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := crypt.ParseIdentities(identity)
	rs, _ := crypt.ParseRecipients(recipient)
	s, err := crypt.Wrap(fileStore, crypt.Config{Recipients: rs, Identities: ids})
	if err != nil {
		t.Fatal(err)
	}
	x := search.New(s, nil)
	h, err := memory.New(s, memory.Options{Observer: x.Observer(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if res := h.Create(ctx, "/memories/secret.md", "the launch codeword is zebracorn\n"); res.IsError {
		t.Fatal(res.Text)
	}
	if got := paths(t, x, "zebracorn"); !equal(got, []string{"/memories/secret.md"}) {
		t.Errorf("%v", got)
	}
	if res := h.Create(ctx, "/memories/two.md", "zebracorn again\n"); res.IsError {
		t.Fatal(res.Text)
	}
	if got := paths(t, x, "zebracorn"); len(got) != 2 {
		t.Errorf("%v", got)
	}
	files := 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		data, err := os.ReadFile(p)
		if bytes.Contains(data, []byte("zebracorn")) {
			t.Errorf("%s holds the plain text", p)
		}
		return err
	})
	if err != nil || files < 2 {
		t.Errorf("walked %d files: %v", files, err)
	}
}

// TestMountsAndTenants searches across the mounts of a table, and keeps
// each tenant (a prefixed store) to its own files.
func TestMountsAndTenants(t *testing.T) {
	ctx := context.Background()
	shared := mem.New(nil)
	put(t, shared, map[string]string{"alice/n.md": "shared word alice\n", "bob/n.md": "shared word bob\n"})
	alice, _ := blob.Prefix(shared, "alice")
	bob, _ := blob.Prefix(shared, "bob")
	team := mem.New(nil)
	put(t, team, map[string]string{"plan.md": "shared word team\n"})
	table, err := mount.New([]mount.Mount{{Name: "me", Store: alice}, {Name: "team", Store: team, ReadOnly: true}})
	if err != nil {
		t.Fatal(err)
	}
	x := search.New(table, nil)
	check(t, x, []want{{search.Request{Query: "shared"}, `Found 2 files for "shared" in /memories:
/memories/me/n.md (line 1)
     1	«shared» word alice
/memories/team/plan.md (line 1)
     1	«shared» word team`}})
	if got := paths(t, x, "bob"); len(got) != 0 {
		t.Errorf("alice's table finds bob's file: %v", got)
	}
	if got := paths(t, search.New(bob, nil), "shared"); !equal(got, []string{"/memories/n.md"}) {
		t.Errorf("bob finds %v", got)
	}
	h, err := memory.New(table, memory.Options{Observer: x.Observer(nil), MaxFiles: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res := h.Create(ctx, "/memories/me/new.md", "shared again\n"); res.IsError {
		t.Fatal(res.Text)
	}
	if got := paths(t, x, "again"); !equal(got, []string{"/memories/me/new.md"}) {
		t.Errorf("%v", got)
	}
}

// TestAnotherClient changes a store through a client of its own, as
// another process or machine would, on the file store and, when their
// settings are in the environment, on MinIO and Redis: the index sees
// nothing until it refreshes; then one refresh costs one listing and a
// read of each file created or edited (none for the one deleted), and the
// index answers as one built anew.
func TestAnotherClient(t *testing.T) {
	for _, backend := range []string{"file", "minio", "redis"} {
		t.Run(backend, func(t *testing.T) {
			ctx := t.Context()
			raw := benchURL(t, backend)
			here, there := openURL(t, raw), openURL(t, raw)
			put(t, there, map[string]string{"a.md": "alpha one\n", "b.md": "beta one\n", "c.md": "gamma one\n"})
			counted := blob.NewCounter(here)
			x := search.New(counted, &search.Options{MaxAge: time.Hour})
			if got := paths(t, x, "one"); !equal(got, []string{"/memories/a.md", "/memories/b.md", "/memories/c.md"}) {
				t.Fatalf("built: %v", got)
			}
			h, err := memory.New(there, memory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range []memory.Result{
				h.Create(ctx, "/memories/d/new.md", "delta two\n"),
				h.StrReplace(ctx, "/memories/a.md", "one", "two"),
				h.Delete(ctx, "/memories/b.md"),
			} {
				if res.IsError {
					t.Fatal(res.Text)
				}
			}
			if got := paths(t, x, "one two"); !equal(got, []string{"/memories/a.md", "/memories/b.md", "/memories/c.md"}) {
				t.Errorf("before its refresh the index answers from what it read: %v", got)
			}
			counted.Reset()
			if err := x.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			if got, want := counted.Counts(), (blob.Counts{List: 1, Get: 2}); got != want {
				t.Errorf("the refresh made %+v, want %+v", got, want)
			}
			// "one" is in one file now, "two" in two: c.md first, then a tie, by path
			want := []string{"/memories/c.md", "/memories/a.md", "/memories/d/new.md"}
			if got := paths(t, x, "one two"); !equal(got, want) {
				t.Errorf("after the refresh: %v, want %v", got, want)
			}
			if got := paths(t, search.New(here, nil), "one two"); !equal(got, want) {
				t.Errorf("an index built anew: %v, want %v", got, want)
			}
		})
	}
}
