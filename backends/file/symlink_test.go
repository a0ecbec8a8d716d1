//go:build unix

package file_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// TestSymlinksNotFollowed plants links inside the root that point outside
// it: no call reads, writes, lists or deletes anything through them.
func TestSymlinksNotFollowed(t *testing.T) {
	ctx := t.Context()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	s := open(t, root)
	mustPut(t, s, "d/real", "inside")
	for link, target := range map[string]string{
		"dirlink":   outside, // a directory link at the top
		"d/dirlink": outside, // and below it
		"filelink":  secret,  // a file link
		"d/loop":    "loop",  // a link to itself
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}

	if got := keys(t, s); !slices.Equal(got, []string{"d/real"}) {
		t.Fatalf("List = %q, want only d/real", got)
	}
	for _, key := range []string{"dirlink/secret", "d/dirlink/secret", "filelink", "d/loop", "d/loop/x"} {
		if _, _, err := s.Get(ctx, key, blob.MaxObjectBytes); !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("Get(%q) error = %v, want ErrNotExist", key, err)
		}
		if _, err := s.Stat(ctx, key); !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("Stat(%q) error = %v, want ErrNotExist", key, err)
		}
		if err := s.Delete(ctx, key, blob.Cond{}); !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("Delete(%q) error = %v, want ErrNotExist", key, err)
		}
	}
	for _, key := range []string{"dirlink/secret", "dirlink/new", "d/dirlink/new", "d/loop/x"} {
		if _, err := s.Put(ctx, key, []byte("written"), blob.Cond{}); err == nil {
			t.Errorf("Put(%q) through a link succeeded", key)
		}
	}
	for _, dir := range []string{"dirlink", "d/dirlink"} {
		if err := blob.DeleteTree(ctx, s, dir); !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("DeleteTree(%q) error = %v, want ErrNotExist", dir, err)
		}
		if err := blob.Rename(ctx, s, dir, "moved"); !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("Rename(%q) error = %v, want ErrNotExist", dir, err)
		}
	}
	if err := blob.Rename(ctx, s, "d/real", "dirlink/real"); err == nil {
		t.Error("Rename into a linked directory succeeded")
	}
	if err := blob.Rename(ctx, s, "d/real", "filelink"); err == nil {
		t.Error("Rename onto a link succeeded")
	}
	// A Put at a link's own name replaces the link, not its target.
	mustPut(t, s, "filelink", "replaced")
	if fi, err := os.Lstat(filepath.Join(root, "filelink")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("after Put(filelink): %v, %v; want a regular file", fi.Mode(), err)
	}

	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "secret" {
		t.Errorf("the outside directory now holds %v", entries)
	}
	if data, err := os.ReadFile(secret); err != nil || string(data) != "outside" {
		t.Errorf("the outside file now holds %q, %v", data, err)
	}
	wantContent(t, s, "d/real", "inside")
}
