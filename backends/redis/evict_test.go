package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
)

// The tests of this file evict objects as a server under maxmemory would,
// or as another program writing the same Redis may: they delete an
// object's hash with a raw client and leave its index entry, which is then
// stale.

// evictFixture is a store over a fresh prefix of the test server
// (lockServer finds it), with a raw client to the same server.
type evictFixture struct {
	s      blob.Store
	raw    *goredis.Client
	keys   keys
	prefix string
}

// newEvictFixture opens a store under a fresh prefix and deletes every key
// of that prefix when the test ends.
func newEvictFixture(t *testing.T) *evictFixture {
	t.Helper()
	addr := lockServer(t)
	prefix := "evicttest-" + rand.Text()
	raw := goredis.NewClient(&goredis.Options{Addr: addr})
	f := &evictFixture{s: lockStore(t, addr, prefix), raw: raw, keys: newKeys(prefix), prefix: prefix}
	t.Cleanup(func() {
		defer raw.Close()
		ctx := context.Background() // t.Context() is done by now
		iter := raw.Scan(ctx, 0, "cm:{"+prefix+"}:*", 1000).Iterator()
		for iter.Next(ctx) {
			if err := raw.Del(ctx, iter.Val()).Err(); err != nil {
				t.Errorf("cleanup: DEL: %v", err)
				return
			}
		}
		if err := iter.Err(); err != nil {
			t.Errorf("cleanup: SCAN: %v", err)
		}
	})
	return f
}

// put creates each key with its own name as content.
func (f *evictFixture) put(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := f.s.Put(t.Context(), k, []byte(k), blob.Cond{}); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
}

// evict deletes the objects' hashes, leaving their index entries.
func (f *evictFixture) evict(t *testing.T, keys ...string) {
	t.Helper()
	for _, k := range keys {
		n, err := f.raw.Del(t.Context(), f.keys.object(k)).Result()
		if err != nil || n != 1 {
			t.Fatalf("DEL of %q's hash = %d, %v; want 1", k, n, err)
		}
	}
}

// index returns every member of the store's index, in order.
func (f *evictFixture) index(t *testing.T) []string {
	t.Helper()
	members, err := f.raw.ZRange(t.Context(), f.keys.idx, 0, -1).Result()
	if err != nil {
		t.Fatalf("ZRANGE of the index: %v", err)
	}
	return members
}

// listed returns the keys the store lists.
func (f *evictFixture) listed(t *testing.T) []string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), f.s, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return blob.Keys(infos)
}

// want checks that the store lists exactly listed and that its index holds
// exactly index.
func (f *evictFixture) want(t *testing.T, step string, listed, index []string) {
	t.Helper()
	// The index first: List removes the stale entries it meets.
	if got := f.index(t); !slices.Equal(got, index) {
		t.Errorf("%s: index = %q, want %q", step, got, index)
	}
	if got := f.listed(t); !slices.Equal(got, listed) {
		t.Errorf("%s: List = %q, want %q", step, got, listed)
	}
}

// TestStaleEntryRemovedWhenMet: every call that meets an index entry whose
// object is gone removes the entry, so that no later call meets it again,
// and otherwise does what it does when the entry is absent.
func TestStaleEntryRemovedWhenMet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		live    []string // created and kept
		evicted []string // created, then evicted
		call    func(ctx context.Context, s blob.Store) error
		wantErr error
		listed  []string // what List yields afterwards
		index   []string // the index afterwards
	}{
		{
			// The clash check of a new "d" meets every entry under d/.
			name:    "Put creating a parent",
			evicted: []string{"d/a", "d/b", "d/c/e"},
			call: func(ctx context.Context, s blob.Store) error {
				_, err := s.Put(ctx, "d", []byte("d"), blob.Cond{IfAbsent: true})
				return err
			},
			listed: []string{"d"},
			index:  []string{"d"},
		},
		{
			// The clash check stops at the live object under d/ and
			// refuses the create, having removed the stale entry before it.
			name:    "Put refused by a live object",
			live:    []string{"d/b"},
			evicted: []string{"d/a", "d/c"},
			call: func(ctx context.Context, s blob.Store) error {
				_, err := s.Put(ctx, "d", []byte("d"), blob.Cond{IfAbsent: true})
				return err
			},
			wantErr: blob.ErrPrecondition,
			listed:  []string{"d/b"},
			index:   []string{"d/b", "d/c"},
		},
		{
			// So does the clash check of a Rename onto "d".
			name:    "Rename onto a parent",
			live:    []string{"s"},
			evicted: []string{"d/a", "d/b"},
			call:    func(ctx context.Context, s blob.Store) error { return blob.Rename(ctx, s, "s", "d") },
			listed:  []string{"d"},
			index:   []string{"d"},
		},
		{
			name:    "Delete",
			live:    []string{"b"},
			evicted: []string{"a"},
			call:    func(ctx context.Context, s blob.Store) error { return s.Delete(ctx, "a", blob.Cond{}) },
			wantErr: blob.ErrNotExist,
			listed:  []string{"b"},
			index:   []string{"b"},
		},
		{
			name:    "Delete at a version",
			evicted: []string{"a"},
			call:    func(ctx context.Context, s blob.Store) error { return s.Delete(ctx, "a", blob.Cond{IfVersion: "1"}) },
			wantErr: blob.ErrPrecondition,
			listed:  nil,
			index:   nil,
		},
		{
			name:    "List",
			live:    []string{"a", "c"},
			evicted: []string{"b", "d/e"},
			call: func(ctx context.Context, s blob.Store) error {
				_, err := blob.ListAll(ctx, s, "")
				return err
			},
			listed: []string{"a", "c"},
			index:  []string{"a", "c"},
		},
		{
			name:    "DeleteTree of evicted files",
			live:    []string{"e"},
			evicted: []string{"d/a", "d/b"},
			call:    func(ctx context.Context, s blob.Store) error { return blob.DeleteTree(ctx, s, "d") },
			wantErr: blob.ErrNotExist,
			listed:  []string{"e"},
			index:   []string{"e"},
		},
		{
			name:    "DeleteTree",
			live:    []string{"d/b", "e"},
			evicted: []string{"d/a"},
			call:    func(ctx context.Context, s blob.Store) error { return blob.DeleteTree(ctx, s, "d") },
			listed:  []string{"e"},
			index:   []string{"e"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEvictFixture(t)
			f.put(t, tc.evicted...)
			f.evict(t, tc.evicted...)
			f.put(t, tc.live...)
			err := tc.call(t.Context(), f.s)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("error = %v, want %v", err, tc.wantErr)
			}
			f.want(t, "after the call", tc.listed, tc.index)
		})
	}
}

// TestRenameOfEvictedSource: a Rename whose source object was evicted
// finds nothing to move, as blob.Tree says: it fails with ErrNotExist and
// moves nothing, unless live objects lie under src/, which it moves as a
// directory. Evicted entries under a directory are not moved, nor counted
// as moved.
func TestRenameOfEvictedSource(t *testing.T) {
	for _, tc := range []struct {
		name          string
		live, evicted []string
		src, dst      string
		wantErr       error
		listed, index []string
	}{
		{
			name:    "a file",
			live:    []string{"other"},
			evicted: []string{"f"},
			src:     "f", dst: "g",
			wantErr: blob.ErrNotExist,
			listed:  []string{"other"},
			index:   []string{"other"},
		},
		{
			// ErrNotExist comes before the destination's clash, as it
			// does for a source that was never there.
			name:    "a file onto an existing name",
			live:    []string{"g"},
			evicted: []string{"f"},
			src:     "f", dst: "g",
			wantErr: blob.ErrNotExist,
			listed:  []string{"g"},
			index:   []string{"g"},
		},
		{
			name:    "a directory of evicted files",
			live:    []string{"other"},
			evicted: []string{"d/a", "d/b/c"},
			src:     "d", dst: "e",
			wantErr: blob.ErrNotExist,
			listed:  []string{"other"},
			index:   []string{"other"},
		},
		{
			name:    "a directory with a live file",
			live:    []string{"d/b"},
			evicted: []string{"d/a", "d/c"},
			src:     "d", dst: "e",
			listed: []string{"e/b"},
			index:  []string{"e/b"},
		},
		{
			// The evicted file "f" did not keep "f/a" from being created
			// (the clash check skips it); "f" names that directory now.
			name:    "an evicted file over a live directory",
			live:    []string{"f/a"},
			evicted: []string{"f"},
			src:     "f", dst: "g",
			listed: []string{"g/a"},
			index:  []string{"g/a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEvictFixture(t)
			f.put(t, tc.evicted...)
			f.evict(t, tc.evicted...)
			f.put(t, tc.live...)
			err := blob.Rename(t.Context(), f.s, tc.src, tc.dst)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("Rename(%q, %q) = %v, want %v", tc.src, tc.dst, err, tc.wantErr)
			}
			f.want(t, "after the rename", tc.listed, tc.index)
		})
	}
}

// TestStaleEntryRemovalRaces: writers re-create evicted keys while other
// clients, each with a connection of its own, meet the stale entries (a
// List, and a create of their parent whose clash check scans them), all
// released at once. No entry of an acknowledged create is removed: every
// acknowledged file is listed and indexed at the end, and nothing else is.
func TestStaleEntryRemovalRaces(t *testing.T) {
	const n = 16
	f := newEvictFixture(t)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("d/k%02d", i)
	}
	f.put(t, names...)
	f.evict(t, names...)

	addr := lockServer(t)
	ctx := t.Context()
	start := make(chan struct{})
	var wg sync.WaitGroup
	created := make([]bool, n) // writer i's create acknowledged
	refused := make([]bool, n) // writer i refused: "d" was a file by then
	parents := make([]bool, n) // cleaner i's create of "d" acknowledged
	errs := make(chan error, 2*n)
	for i := range n {
		writer, cleaner := lockStore(t, addr, f.prefix), lockStore(t, addr, f.prefix)
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, err := writer.Put(ctx, names[i], []byte("new"), blob.Cond{IfAbsent: true})
			switch {
			case err == nil:
				created[i] = true
			case errors.Is(err, blob.ErrPrecondition):
				refused[i] = true
			default:
				errs <- fmt.Errorf("writer %d: %w", i, err)
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			createParent := func() {
				_, err := cleaner.Put(ctx, "d", []byte("d"), blob.Cond{IfAbsent: true})
				switch {
				case err == nil:
					parents[i] = true
				case !errors.Is(err, blob.ErrPrecondition):
					errs <- fmt.Errorf("cleaner %d: Put: %w", i, err)
				}
			}
			if i%2 == 1 { // half of them before their listings, half after
				createParent()
			}
			for range 3 {
				if _, err := blob.ListAll(ctx, cleaner, "d/"); err != nil {
					errs <- fmt.Errorf("cleaner %d: List: %w", i, err)
					return
				}
			}
			if i%2 == 0 {
				createParent()
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	var want []string
	acked, refusals, parent := 0, 0, 0
	for i := range n {
		if parents[i] {
			parent++
		}
		if refused[i] {
			refusals++
		}
		if created[i] {
			acked++
			want = append(want, names[i])
		}
	}
	if parent > 0 {
		want = append([]string{"d"}, want...)
	}
	t.Logf("%d creates acknowledged, %d refused, %d creates of their parent acknowledged", acked, refusals, parent)
	if acked+refusals != n {
		t.Errorf("%d creates acknowledged and %d refused, want %d in all", acked, refusals, n)
	}
	if parent > 1 || parent == 1 && acked > 0 {
		t.Errorf("%d creates of d and %d of files under it acknowledged: d is a file and a directory", parent, acked)
	}
	// Every acknowledged file is present; the one List before the index
	// check removes the stale entries nobody met.
	if got := f.listed(t); !slices.Equal(got, want) {
		t.Errorf("List = %q, want the acknowledged %q", got, want)
	}
	if got := f.index(t); !slices.Equal(got, want) {
		t.Errorf("index = %q, want the acknowledged %q", got, want)
	}
}

// TestListByReadOnlyUser: a List by a user whose ACL grants no writes
// lists the live objects and leaves the stale entries it cannot remove.
func TestListByReadOnlyUser(t *testing.T) {
	f := newEvictFixture(t)
	f.put(t, "a", "b")
	f.evict(t, "a")
	ctx := t.Context()
	user, password := "evicttest-reader-"+rand.Text(), rand.Text()
	err := f.raw.Do(ctx, "ACL", "SETUSER", user, "on", ">"+password, "~*", "resetchannels", "+@read", "+@scripting").Err()
	if err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() {
		if err := f.raw.Do(context.Background(), "ACL", "DELUSER", user).Err(); err != nil {
			t.Errorf("cleanup: ACL DELUSER: %v", err)
		}
	})
	client := goredis.NewClient(&goredis.Options{Addr: lockServer(t), Username: user, Password: password})
	t.Cleanup(func() { client.Close() })
	reader, err := Open(ctx, client, &Options{Prefix: f.prefix})
	if err != nil {
		t.Fatalf("Open as %s: %v", user, err)
	}
	// The user cannot write: the check that it is the ACL that keeps the
	// entry, not a List that never tried.
	if _, err := reader.Put(ctx, "c", []byte("c"), blob.Cond{}); err == nil {
		t.Fatal("Put by the read-only user succeeded")
	}
	infos, err := blob.ListAll(ctx, reader, "")
	if err != nil {
		t.Fatalf("List by the read-only user: %v", err)
	}
	if got, want := blob.Keys(infos), []string{"b"}; !slices.Equal(got, want) {
		t.Errorf("List by the read-only user = %q, want %q", got, want)
	}
	if got, want := f.index(t), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("index after the read-only List = %q, want %q", got, want)
	}
}
