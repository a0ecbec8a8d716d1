package mount_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/mount"
)

// newTable returns a table over the given mounts and closes it at the end
// of the test.
func newTable(t *testing.T, mounts ...mount.Mount) blob.Store {
	t.Helper()
	s, err := mount.New(mounts)
	if err != nil {
		t.Fatalf("mount.New: %v", err)
	}
	t.Cleanup(func() {
		if err := blob.Close(s); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// inside returns the store of the keys of s under the mount point name, a
// plain store (blob.Prefix does not forward blob.Traits.Mounts).
func inside(t *testing.T, s blob.Store, name string) blob.Store {
	t.Helper()
	p, err := blob.Prefix(s, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// throughMount are the subtests a store seen through one mount of a table
// cannot pass as written.
var throughMount = blobtest.Options{Skip: map[string]string{
	"MaxLenKey": "the mount's name and '/' take 2 of the MaxKeyLen bytes; TestLongestKey checks the shorter limit",
}}

// The table passes the conformance suite through one of its mounts, alone
// and beside another mount that already holds keys, with and without the
// mounted store's capabilities.
func TestConformance(t *testing.T) {
	t.Run("OneMount", func(t *testing.T) {
		blobtest.RunWith(t, func(t *testing.T) blob.Store {
			return inside(t, newTable(t, mount.Mount{Name: "m", Store: mem.New(nil)}), "m")
		}, throughMount)
	})
	t.Run("BesideAnother", func(t *testing.T) {
		blobtest.RunWith(t, func(t *testing.T) blob.Store {
			other := mem.New(nil)
			put(t, other, "a", "other")
			put(t, other, "x/y", "other")
			tab := newTable(t, mount.Mount{Name: "me", Store: mem.New(nil)}, mount.Mount{Name: "m", Store: other})
			return inside(t, tab, "me")
		}, throughMount)
	})
	t.Run("CoreMethodsOnly", func(t *testing.T) {
		blobtest.RunWith(t, func(t *testing.T) blob.Store {
			return inside(t, newTable(t, mount.Mount{Name: "m", Store: coreOnly{mem.New(nil)}}), "m")
		}, throughMount)
	})
	t.Run("ReadOnly", func(t *testing.T) {
		blobtest.RunReadOnly(t, func(t *testing.T, objects map[string][]byte) blob.Store {
			inner := mem.New(nil)
			for k, v := range objects {
				put(t, inner, k, string(v))
			}
			return inside(t, newTable(t, mount.Mount{Name: "m", Store: inner, ReadOnly: true}), "m")
		})
	})
}

// coreOnly hides every capability of the store it embeds.
type coreOnly struct{ blob.Store }

func put(t *testing.T, s blob.Store, key, data string) blob.Info {
	t.Helper()
	info, err := s.Put(t.Context(), key, []byte(data), blob.Cond{})
	if err != nil {
		t.Fatalf("Put %q: %v", key, err)
	}
	return info
}

func keys(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, prefix)
	if err != nil {
		t.Fatalf("List %q: %v", prefix, err)
	}
	var out []string
	for _, info := range infos {
		out = append(out, info.Key)
	}
	return out
}

func TestNewRefusesBadTables(t *testing.T) {
	s := mem.New(nil)
	for _, tc := range []struct {
		name   string
		mounts []mount.Mount
		want   string
	}{
		{"none", nil, "mount: invalid mount table: no mount"},
		{"empty name", []mount.Mount{{Name: "", Store: s}}, "mount: invalid mount table: empty mount name"},
		{"slash", []mount.Mount{{Name: "a/b", Store: s}}, `mount: invalid mount table: mount name "a/b" has a '/': a mount name is one path segment`},
		{"dot", []mount.Mount{{Name: ".", Store: s}}, `mount: invalid mount table: mount name "." is not a valid key segment`},
		{"dotdot", []mount.Mount{{Name: "..", Store: s}}, `mount: invalid mount table: mount name ".." is not a valid key segment`},
		{"control", []mount.Mount{{Name: "a\x01", Store: s}}, `mount: invalid mount table: mount name "a\x01" is not a valid key segment`},
		{"hidden", []mount.Mount{{Name: ".team", Store: s}}, `mount: invalid mount table: mount name ".team" starts with '.', which listings hide`},
		{"node_modules", []mount.Mount{{Name: "node_modules", Store: s}}, `mount: invalid mount table: mount name "node_modules" is hidden from listings`},
		{"reserved", []mount.Mount{{Name: "x.cloudmem", Store: s}, {Name: ".cloudmem-x", Store: s}}, `mount: invalid mount table: mount name ".cloudmem-x" starts with '.', which listings hide`},
		{"percent", []mount.Mount{{Name: "a%2fb", Store: s}}, `mount: invalid mount table: mount name "a%2fb" has a '\' or '%', which no memory path may carry`},
		{"backslash", []mount.Mount{{Name: `a\b`, Store: s}}, `mount: invalid mount table: mount name "a\\b" has a '\' or '%', which no memory path may carry`},
		{"long", []mount.Mount{{Name: strings.Repeat("n", 256), Store: s}}, `mount: invalid mount table: mount name "` + strings.Repeat("n", 256) + `" is over 255 bytes`},
		{"nil store", []mount.Mount{{Name: "team"}}, `mount: invalid mount table: mount "team" has a nil store`},
		{"twice", []mount.Mount{{Name: "team", Store: s}, {Name: "team", Store: mem.New(nil)}}, `mount: invalid mount table: mount name "team" is used twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mount.New(tc.mounts)
			if got != nil || err == nil || err.Error() != tc.want || !errors.Is(err, mount.ErrInvalidTable) {
				t.Fatalf("New = %v, %v; want nil, %q (ErrInvalidTable)", got, err, tc.want)
			}
			// The reason alone, for a program that words the error itself.
			te, ok := errors.AsType[*mount.TableError](err)
			if want := strings.TrimPrefix(tc.want, "mount: invalid mount table: "); !ok || te.Reason != want {
				t.Fatalf("New's error as a *TableError: %v, %v; want the reason %q", te, ok, want)
			}
		})
	}
	for _, name := range []string{"x", "x.cloudmem", "team-2026", "é"} {
		if err := mount.CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
}

// List yields the keys of every mount in byte order even when the order of
// the mount names differs from it ("a.b" < "a" once each is followed by
// '/'), and a prefix reaches only the mounts it can match.
func TestListOrderAndPrefixes(t *testing.T) {
	a, ab, b := mem.New(nil), mem.New(nil), mem.New(nil)
	tab := newTable(t, mount.Mount{Name: "a", Store: a}, mount.Mount{Name: "b", Store: b}, mount.Mount{Name: "a.b", Store: ab})
	put(t, a, "x", "1")
	put(t, a, "y/z", "2")
	put(t, ab, "x", "3")
	put(t, b, "q", "4")
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"", []string{"a.b/x", "a/x", "a/y/z", "b/q"}},
		{"a", []string{"a.b/x", "a/x", "a/y/z"}},
		{"a/", []string{"a/x", "a/y/z"}},
		{"a/y", []string{"a/y/z"}},
		{"a/y/", []string{"a/y/z"}},
		{"a.", []string{"a.b/x"}},
		{"c", nil},
		{"b/q", []string{"b/q"}},
	} {
		if got := keys(t, tab, tc.prefix); !slices.Equal(got, tc.want) {
			t.Errorf("List(%q) = %q, want %q", tc.prefix, got, tc.want)
		}
	}
}

// Reads of a mount point or of a key outside every mount find nothing and
// reach no store; writes there are refused and reach no store.
func TestOutsideMountsAndMountPoints(t *testing.T) {
	ctx := t.Context()
	inner := blob.NewCounter(mem.New(nil))
	tab := newTable(t, mount.Mount{Name: "team", Store: inner})
	for _, key := range []string{"team", "x", "x/y", "teamx/y"} {
		if _, _, err := tab.Get(ctx, key, 10); !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("Get(%q) = %v, want ErrNotExist", key, err)
		}
		if _, err := tab.Stat(ctx, key); !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("Stat(%q) = %v, want ErrNotExist", key, err)
		}
		want := mount.ErrNotMounted
		if key == "team" {
			want = mount.ErrMountPoint
		}
		if _, err := tab.Put(ctx, key, []byte("x"), blob.Cond{}); !errors.Is(err, want) {
			t.Errorf("Put(%q) = %v, want %v", key, err, want)
		}
		if err := tab.Delete(ctx, key, blob.Cond{}); !errors.Is(err, want) {
			t.Errorf("Delete(%q) = %v, want %v", key, err, want)
		}
		if err := blob.DeleteTree(ctx, tab, key); !errors.Is(err, want) {
			t.Errorf("DeleteTree(%q) = %v, want %v", key, err, want)
		}
		if err := blob.Rename(ctx, tab, key, "y/new"); !errors.Is(err, want) {
			t.Errorf("Rename(%q, y/new) = %v, want %v", key, err, want)
		}
	}
	put(t, tab, "team/a", "1")
	for _, dst := range []string{"team", "x/a"} {
		if err := blob.Rename(ctx, tab, "team/a", dst); err == nil || errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("Rename(team/a, %q) = %v, want a refusal", dst, err)
		}
	}
	if got := inner.Counts(); got != (blob.Counts{Put: 1}) {
		t.Errorf("the mounted store saw %+v, want only the one Put", got)
	}
	if got := keys(t, inner, ""); !slices.Equal(got, []string{"a"}) {
		t.Errorf("mounted store holds %q", got)
	}
}

// blob.Tree reach the mount's own store within one mount; a
// rename across two mounts copies and deletes through the table; and a
// read-only side refuses before any call.
func TestCapabilities(t *testing.T) {
	ctx := t.Context()
	team, me, ro := blob.NewCounter(mem.New(nil)), blob.NewCounter(mem.New(nil)), mem.New(nil)
	put(t, ro, "r", "read-only")
	tab := newTable(t, mount.Mount{Name: "team", Store: team}, mount.Mount{Name: "me", Store: me},
		mount.Mount{Name: "ro", Store: ro, ReadOnly: true})
	put(t, tab, "team/d/a", "1")
	put(t, tab, "team/d/b", "2")
	team.Reset()

	if err := blob.Rename(ctx, tab, "team/d", "team/e"); err != nil {
		t.Fatal(err)
	}
	if got := team.Counts(); got != (blob.Counts{Rename: 1}) {
		t.Errorf("rename within a mount made %+v, want one Rename", got)
	}
	team.Reset()
	if err := blob.Rename(ctx, tab, "team/e", "me/e"); err != nil {
		t.Fatal(err)
	}
	// blob.Rename's fallback: Get (not a file) + List of the source tree,
	// Stat + List of the destination, a Get and Put(IfAbsent) per object,
	// then a Delete(IfVersion) per source.
	if got, want := team.Counts(), (blob.Counts{Get: 3, List: 1, Delete: 2}); got != want {
		t.Errorf("rename across mounts made %+v on the source, want %+v", got, want)
	}
	if got, want := me.Counts(), (blob.Counts{Stat: 1, List: 1, Put: 2}); got != want {
		t.Errorf("rename across mounts made %+v on the destination, want %+v", got, want)
	}
	if got := keys(t, tab, ""); !slices.Equal(got, []string{"me/e/a", "me/e/b", "ro/r"}) {
		t.Errorf("after the renames the table holds %q", got)
	}
	me.Reset()
	if err := blob.DeleteTree(ctx, tab, "me/e"); err != nil {
		t.Fatal(err)
	}
	if got := me.Counts(); got != (blob.Counts{DeleteTree: 1}) {
		t.Errorf("DeleteTree made %+v, want one DeleteTree", got)
	}

	put(t, tab, "me/x", "x")
	for _, mv := range [][2]string{{"me/x", "ro/x"}, {"ro/r", "me/r"}, {"ro/r", "ro/s"}} {
		if err := blob.Rename(ctx, tab, mv[0], mv[1]); !errors.Is(err, blob.ErrReadOnly) {
			t.Errorf("Rename(%q, %q) = %v, want ErrReadOnly", mv[0], mv[1], err)
		}
	}
	if err := blob.DeleteTree(ctx, tab, "ro/d"); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("DeleteTree(ro/d) = %v, want ErrReadOnly", err)
	}
	if got := keys(t, tab, ""); !slices.Equal(got, []string{"me/x", "ro/r"}) {
		t.Errorf("after the refusals the table holds %q", got)
	}
}

func TestMountsAndReadOnly(t *testing.T) {
	tab := newTable(t, mount.Mount{Name: "team", Store: mem.New(nil), ReadOnly: true},
		mount.Mount{Name: "me", Store: mem.New(nil)}, mount.Mount{Name: "docs", Store: blob.ReadOnly(mem.New(nil))})
	const k = blob.MaxKeyLen
	want := []blob.MountPoint{{Name: "docs", ReadOnly: true, KeyBudget: k}, {Name: "me", KeyBudget: k}, {Name: "team", ReadOnly: true, KeyBudget: k}}
	if got := blob.Mounts(tab); !slices.Equal(got, want) {
		t.Errorf("Mounts = %v, want %v", got, want)
	}
	if got := blob.Mounts(blob.NewCounter(tab)); !slices.Equal(got, want) {
		t.Errorf("Mounts through a Counter = %v, want %v", got, want)
	}
	allRO := []blob.MountPoint{{Name: "docs", ReadOnly: true, KeyBudget: k}, {Name: "me", ReadOnly: true, KeyBudget: k}, {Name: "team", ReadOnly: true, KeyBudget: k}}
	if got := blob.Mounts(blob.ReadOnly(tab)); !slices.Equal(got, allRO) {
		t.Errorf("Mounts through ReadOnly = %v, want %v", got, allRO)
	}
	if got := blob.Mounts(inside(t, tab, "me")); got != nil {
		t.Errorf("Mounts through Prefix = %v, want nil", got)
	}
	if blob.IsReadOnly(tab) {
		t.Error("a table with one writable mount reports read-only")
	}
	ro := newTable(t, mount.Mount{Name: "a", Store: mem.New(nil), ReadOnly: true})
	if !blob.IsReadOnly(ro) {
		t.Error("a table of read-only mounts does not report read-only")
	}
	if _, err := ro.Put(t.Context(), "a/x", nil, blob.Cond{}); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("Put into a read-only mount = %v, want ErrReadOnly", err)
	}
}

// A key of the table is at most blob.MaxKeyLen bytes, the mount's name
// included.
func TestLongestKey(t *testing.T) {
	inner := mem.New(nil)
	tab := newTable(t, mount.Mount{Name: "m", Store: inner})
	longest := "m/" + strings.Repeat("k", blob.MaxKeyLen-2)
	put(t, tab, longest, "longest")
	if got := keys(t, inner, ""); !slices.Equal(got, []string{longest[2:]}) {
		t.Errorf("mounted store holds %q", got)
	}
	if _, err := tab.Put(t.Context(), longest+"k", nil, blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Put of a key over MaxKeyLen = %v, want ErrInvalidKey", err)
	}
}

// Close closes every mounted store and reports each failure.
func TestClose(t *testing.T) {
	a, b := &closer{Store: mem.New(nil)}, &closer{Store: mem.New(nil), err: errors.New("boom")}
	tab, err := mount.New([]mount.Mount{{Name: "a", Store: a}, {Name: "b", Store: b}})
	if err != nil {
		t.Fatal(err)
	}
	err = blob.Close(tab)
	if want := `mount "b": boom`; err == nil || err.Error() != want {
		t.Errorf("Close = %v, want %q", err, want)
	}
	if a.closed != 1 || b.closed != 1 {
		t.Errorf("closed %d and %d times, want once each", a.closed, b.closed)
	}
}

type closer struct {
	blob.Store
	err    error
	closed int
}

func (c *closer) Close() error { c.closed++; return c.err }

var _ io.Closer = (*closer)(nil)

// A cancelled context reaches the mounted store, which honours it.
func TestCancelled(t *testing.T) {
	tab := newTable(t, mount.Mount{Name: "m", Store: mem.New(nil)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := tab.Put(ctx, "m/a", []byte("x"), blob.Cond{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context = %v", err)
	}
}
