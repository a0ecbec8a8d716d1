package blobtest

import (
	"errors"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// copyTests cover blob.Copy, blob.DeleteBatch and blob.DeleteKeys through
// the package functions, so a store's Copier and BatchDeleter are checked
// when it has them and the fallbacks are checked when it does not.
var copyTests = []test{
	{"CopyFile", testCopyFile},
	{"CopyStaleVersion", testCopyStaleVersion},
	{"CopyOntoKey", testCopyOntoKey},
	{"CopyMissing", testCopyMissing},
	{"DeleteBatchVersions", testDeleteBatchVersions},
	{"DeleteBatchKeys", testDeleteBatchKeys},
}

func testCopyFile(t *testing.T, s blob.Store) {
	data := []byte("copied\x00\xff")
	src := put(t, s, "c/src.md", data)
	listed := listInfos(t, s, "c/")
	for _, v := range []struct{ what, version string }{{"Put", src.Version}, {"List", listed[0].Version}} {
		dst := "d/" + v.what + ".md"
		from, to, err := blob.Copy(t.Context(), s, "c/src.md", dst, v.version)
		if err != nil {
			t.Fatalf("Copy with the %s version: %v", v.what, err)
		}
		if from.Key != "c/src.md" || to.Key != dst || to.Size != int64(len(data)) {
			t.Errorf("Copy with the %s version = %+v, %+v; want keys c/src.md and %s, size %d", v.what, from, to, dst, len(data))
		}
		got := wantContent(t, s, dst, data)
		if got.Version != to.Version {
			t.Errorf("Copy returned version %q, Stat of the copy says %q", to.Version, got.Version)
		}
		// The version copied is the source's: it still deletes it
		// conditionally, so a caller can drop the source it copied.
		if v.what == "List" {
			if err := s.Delete(t.Context(), "c/src.md", blob.Cond{IfVersion: from.Version}); err != nil {
				t.Errorf("Delete(IfVersion: the version Copy reports as copied): %v", err)
			}
		} else {
			wantContent(t, s, "c/src.md", data)
		}
	}
}

func testCopyStaleVersion(t *testing.T, s blob.Store) {
	old := put(t, s, "c/src.md", []byte("old"))
	put(t, s, "c/src.md", []byte("new content"))
	from, _, err := blob.Copy(t.Context(), s, "c/src.md", "d/dst.md", old.Version)
	if err != nil {
		t.Fatalf("Copy with a stale version: %v", err)
	}
	// Either way the copy holds the newest content, and from names it.
	wantContent(t, s, "d/dst.md", []byte("new content"))
	if err := s.Delete(t.Context(), "c/src.md", blob.Cond{IfVersion: from.Version}); err != nil {
		t.Errorf("Delete(IfVersion: the version Copy reports as copied): %v", err)
	}
}

func testCopyOntoKey(t *testing.T, s blob.Store) {
	src := put(t, s, "c/src.md", []byte("source"))
	put(t, s, "d/dst.md", []byte("already there"))
	before := takeSnapshot(t, s)
	_, _, err := blob.Copy(t.Context(), s, "c/src.md", "d/dst.md", src.Version)
	wantErr(t, "Copy onto an existing key", err, blob.ErrPrecondition)
	wantUnchanged(t, s, before, "a refused Copy")
}

func testCopyMissing(t *testing.T, s blob.Store) {
	src := put(t, s, "c/src.md", []byte("source"))
	if err := s.Delete(t.Context(), "c/src.md", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	_, _, err := blob.Copy(t.Context(), s, "c/src.md", "d/dst.md", src.Version)
	wantErr(t, "Copy of a missing key", err, blob.ErrNotExist)
	wantAbsent(t, s, "d/dst.md")
}

func testDeleteBatchVersions(t *testing.T, s blob.Store) {
	var infos []blob.Info
	for _, k := range []string{"v/a.md", "v/b.md", "v/c/d.md", "v/e.md", "v/f.md"} {
		infos = append(infos, put(t, s, k, []byte("first "+k)))
	}
	put(t, s, "v/b.md", []byte("rewritten"))
	if err := s.Delete(t.Context(), "v/e.md", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	put(t, s, "v/kept.md", []byte("not named"))
	errs, err := blob.DeleteBatch(t.Context(), s, infos)
	if err != nil {
		t.Fatalf("DeleteBatch: %v", err)
	}
	if len(errs) != len(infos) {
		t.Fatalf("DeleteBatch returned %d errors for %d keys", len(errs), len(infos))
	}
	want := []error{nil, blob.ErrPrecondition, nil, blob.ErrNotExist, nil}
	for i, w := range want {
		switch {
		case w == nil && errs[i] == nil, errors.Is(errs[i], w):
		case w == blob.ErrNotExist && errors.Is(errs[i], blob.ErrPrecondition):
			// Delete(IfVersion) may report a missing key so.
		default:
			t.Errorf("DeleteBatch: %q: %v, want %v", infos[i].Key, errs[i], w)
		}
	}
	wantKeys(t, s, "v/", "v/b.md", "v/kept.md")
	wantContent(t, s, "v/b.md", []byte("rewritten"))
}

// testDeleteBatchKeys deletes keys unconditionally, in one batch and
// through blob.DeleteKeys: a rewritten key goes too, a missing one is no
// error, and a key not named stays.
func testDeleteBatchKeys(t *testing.T, s blob.Store) {
	keys := []string{"u/a.md", "u/b.md", "u/c/d.md", "u/gone.md", "u/e.md"}
	for _, k := range keys {
		if k != "u/gone.md" {
			put(t, s, k, []byte("first "+k))
		}
	}
	put(t, s, "u/b.md", []byte("rewritten"))
	put(t, s, "u/kept.md", []byte("not named"))
	infos := make([]blob.Info, len(keys))
	for i, k := range keys {
		infos[i] = blob.Info{Key: k}
	}
	errs, err := blob.DeleteBatch(t.Context(), s, infos[:3])
	if err != nil || len(errs) != 3 || errors.Join(errs...) != nil {
		t.Fatalf("DeleteBatch without versions = %v, %v; want 3 nil errors", errs, err)
	}
	if err := blob.DeleteKeys(t.Context(), s, keys[3:]); err != nil {
		t.Fatalf("DeleteKeys with a missing key: %v", err)
	}
	wantKeys(t, s, "u/", "u/kept.md")
}
