package blobtest

import (
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// treeTests cover blob.Rename and blob.DeleteTree through the package
// functions, so a store's blob.Tree are checked when it has
// them and the portable fallbacks are checked when it does not.
var treeTests = []test{
	{"RenameFile", testRenameFile},
	{"RenameTree", testRenameTree},
	{"RenameMissing", testRenameMissing},
	{"RenameOntoKey", testRenameOntoKey},
	{"RenameOntoTree", testRenameOntoTree},
	{"RenameIntoItself", testRenameIntoItself},
	{"DeleteTree", testDeleteTree},
}

// snapshot is every key of s with its data and version.
type snapshot map[string]struct{ data, version string }

func takeSnapshot(t *testing.T, s blob.Store) snapshot {
	t.Helper()
	snap := snapshot{}
	for _, info := range listInfos(t, s, "") {
		data, got, err := s.Get(t.Context(), info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatalf("Get(%q) of a listed key: %v", info.Key, err)
		}
		snap[info.Key] = struct{ data, version string }{string(data), got.Version}
	}
	return snap
}

// wantUnchanged checks that s holds exactly what before held.
func wantUnchanged(t *testing.T, s blob.Store, before snapshot, after string) {
	t.Helper()
	now := takeSnapshot(t, s)
	for k, v := range before {
		if w, ok := now[k]; !ok {
			t.Errorf("after %s: %q is gone", after, k)
		} else if w != v {
			t.Errorf("after %s: %q changed from %+v to %+v", after, k, v, w)
		}
	}
	for k := range now {
		if _, ok := before[k]; !ok {
			t.Errorf("after %s: %q appeared", after, k)
		}
	}
}

func testRenameFile(t *testing.T, s blob.Store) {
	putAll(t, s, "d/sibling")
	old := put(t, s, "d/src.md", []byte("content\x00\xff"))
	if err := blob.Rename(t.Context(), s, "d/src.md", "e/f/dst.md"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	wantAbsent(t, s, "d/src.md")
	got := wantContent(t, s, "e/f/dst.md", []byte("content\x00\xff"))
	if got.Version == old.Version {
		t.Errorf("moved object kept its version %q", old.Version)
	}
	wantKeys(t, s, "", "d/sibling", "e/f/dst.md")
}

func testRenameTree(t *testing.T, s blob.Store) {
	keys := []string{"src/a", "src/b/c", "src/b/d/e", "src/.hidden", "src-sibling", "srcx/y", "other/z"}
	putAll(t, s, keys...)
	before := takeSnapshot(t, s)
	if err := blob.Rename(t.Context(), s, "src", "new/place"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	wantKeys(t, s, "", "new/place/.hidden", "new/place/a", "new/place/b/c", "new/place/b/d/e", "other/z", "src-sibling", "srcx/y")
	for _, k := range []string{"src/a", "src/b/c", "src/b/d/e", "src/.hidden"} {
		wantAbsent(t, s, k)
		moved := "new/place" + k[len("src"):]
		got := wantContent(t, s, moved, []byte("data of "+k))
		if got.Version == before[k].version {
			t.Errorf("%q moved to %q kept its version %q", k, moved, got.Version)
		}
	}
	for _, k := range []string{"src-sibling", "srcx/y", "other/z"} {
		if got := wantContent(t, s, k, []byte("data of "+k)); got.Version != before[k].version {
			t.Errorf("untouched %q changed version", k)
		}
	}
	// Moving a subtree of a tree, back under its old name.
	if err := blob.Rename(t.Context(), s, "new/place/b", "src"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	wantKeys(t, s, "", "new/place/.hidden", "new/place/a", "other/z", "src-sibling", "src/c", "src/d/e", "srcx/y")
}

func testRenameMissing(t *testing.T, s blob.Store) {
	putAll(t, s, "ab/c", "a-b", "abc")
	before := takeSnapshot(t, s)
	// "a" is neither a key nor a directory, though keys start with "a".
	wantErr(t, "Rename of a missing key", blob.Rename(t.Context(), s, "a", "z"), blob.ErrNotExist)
	wantErr(t, "Rename of a missing key", blob.Rename(t.Context(), s, "ab/c/d", "z"), blob.ErrNotExist)
	wantUnchanged(t, s, before, "Rename of a missing key")
}

func testRenameOntoKey(t *testing.T, s blob.Store) {
	putAll(t, s, "src", "dst", "tree/a", "tree/b", "dst2")
	before := takeSnapshot(t, s)
	wantErr(t, "Rename(src, dst) of a file onto a file", blob.Rename(t.Context(), s, "src", "dst"), blob.ErrPrecondition)
	wantErr(t, "Rename(tree, dst2) of a tree onto a file", blob.Rename(t.Context(), s, "tree", "dst2"), blob.ErrPrecondition)
	wantUnchanged(t, s, before, "Rename onto an existing key")
}

func testRenameOntoTree(t *testing.T, s blob.Store) {
	putAll(t, s, "src", "dst/x/y", "tree/a", "tree/b")
	before := takeSnapshot(t, s)
	wantErr(t, "Rename(src, dst) of a file onto a tree", blob.Rename(t.Context(), s, "src", "dst"), blob.ErrPrecondition)
	wantErr(t, "Rename(tree, dst) of a tree onto a tree", blob.Rename(t.Context(), s, "tree", "dst"), blob.ErrPrecondition)
	wantErr(t, "Rename(tree, dst/x) of a tree onto a subtree", blob.Rename(t.Context(), s, "tree", "dst/x"), blob.ErrPrecondition)
	wantUnchanged(t, s, before, "Rename onto an existing tree")
}

func testRenameIntoItself(t *testing.T, s blob.Store) {
	putAll(t, s, "t/a", "t/b/c", "f")
	before := takeSnapshot(t, s)
	wantErr(t, "Rename(t, t)", blob.Rename(t.Context(), s, "t", "t"), blob.ErrInvalidKey)
	wantErr(t, "Rename(t, t/b/new)", blob.Rename(t.Context(), s, "t", "t/b/new"), blob.ErrInvalidKey)
	wantErr(t, "Rename(f, f)", blob.Rename(t.Context(), s, "f", "f"), blob.ErrInvalidKey)
	wantUnchanged(t, s, before, "Rename into itself")
	// Not into itself: "t" is no prefix directory of "tx".
	if err := blob.Rename(t.Context(), s, "t", "tx"); err != nil {
		t.Fatalf("Rename(t, tx): %v", err)
	}
	wantKeys(t, s, "", "f", "tx/a", "tx/b/c")
}

func testDeleteTree(t *testing.T, s blob.Store) {
	putAll(t, s, "a/b", "a/c/d", "a/c/e/f", "a/.h", "a-b", "ab", "abc/d", "b/a")
	before := takeSnapshot(t, s)
	if err := blob.DeleteTree(t.Context(), s, "a"); err != nil {
		t.Fatalf("DeleteTree(a): %v", err)
	}
	wantKeys(t, s, "", "a-b", "ab", "abc/d", "b/a")
	for _, k := range []string{"a-b", "ab", "abc/d", "b/a"} {
		if got := wantContent(t, s, k, []byte("data of "+k)); got.Version != before[k].version {
			t.Errorf("DeleteTree(a) changed the version of %q", k)
		}
	}
	wantErr(t, "DeleteTree of a deleted tree", blob.DeleteTree(t.Context(), s, "a"), blob.ErrNotExist)
	wantErr(t, "DeleteTree of a missing tree", blob.DeleteTree(t.Context(), s, "zz"), blob.ErrNotExist)
	wantErr(t, "DeleteTree of a key", blob.DeleteTree(t.Context(), s, "a-b"), blob.ErrNotExist)
	wantErr(t, "DeleteTree of a key", blob.DeleteTree(t.Context(), s, "ab"), blob.ErrNotExist)
	if err := blob.DeleteTree(t.Context(), s, "b"); err != nil {
		t.Fatalf("DeleteTree(b): %v", err)
	}
	wantKeys(t, s, "", "a-b", "ab", "abc/d")
}
