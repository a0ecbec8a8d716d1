//go:build unix

package file_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// TestURL opens file stores through storeurl and checks where a written key
// lands on disk (key "a/b" is the file ROOT/a/b).
func TestURL(t *testing.T) {
	tmp := t.TempDir()
	t.Chdir(tmp)
	ctx := context.Background()
	for _, tc := range []struct {
		raw  string
		file string // where the key notes/a.md lands, relative to tmp
	}{
		{"./rel", "rel/notes/a.md"},
		{"rel2", "rel2/notes/a.md"},
		{"./with?query#and-fragment", "with?query#and-fragment/notes/a.md"},
		{tmp + "/abs", "abs/notes/a.md"},
		{"file://" + tmp + "/url", "url/notes/a.md"},
		{"file://localhost" + tmp + "/localhost", "localhost/notes/a.md"},
		{"file://" + tmp + "/two%20words", "two words/notes/a.md"},
		{"file:opaque/dir", "opaque/dir/notes/a.md"},
		{"file:./dotted%20rel", "dotted rel/notes/a.md"},
		{"file://" + tmp + "/scoped?prefix=agent-7", "scoped/agent-7/notes/a.md"},
	} {
		s, err := storeurl.Open(ctx, tc.raw)
		if err != nil {
			t.Errorf("Open(%q): %v", tc.raw, err)
			continue
		}
		if _, err := s.Put(ctx, "notes/a.md", []byte("x"), blob.Cond{}); err != nil {
			t.Errorf("Open(%q).Put: %v", tc.raw, err)
			continue
		}
		if data, err := os.ReadFile(filepath.Join(tmp, tc.file)); err != nil || string(data) != "x" {
			t.Errorf("Open(%q): %s holds %q, %v; want \"x\"", tc.raw, tc.file, data, err)
		}
	}
}

func TestURLReadOnly(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := storeurl.Open(ctx, "file://"+dir+"?readonly=true")
	if err != nil {
		t.Fatal(err)
	}
	if !blob.IsReadOnly(s) {
		t.Error("IsReadOnly = false for readonly=true")
	}
	if data, _, err := s.Get(ctx, "a.md", blob.MaxObjectBytes); err != nil || string(data) != "kept" {
		t.Errorf("Get = %q, %v; want \"kept\"", data, err)
	}
	if _, err := s.Put(ctx, "a.md", []byte("changed"), blob.Cond{}); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("Put: %v, want blob.ErrReadOnly", err)
	}
	if err := s.Delete(ctx, "a.md", blob.Cond{}); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("Delete: %v, want blob.ErrReadOnly", err)
	}
}

func TestURLErrors(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"file://example.com/srv/m", `file: host "example.com" in a file URL: only local directories are supported (file:///abs/dir)`},
		{"file://me@/srv/m", "file: a file URL has no user or password"},
		{"file:///srv/m?nosync=1", `storeurl: file: unknown URL parameter "nosync" (every scheme accepts: max_file_bytes, max_files, policy, prefix, readonly, secrets, timeout, view_limit)`},
		{"file://", "file: the URL names no directory: want file:///abs/dir, file:rel/dir or a plain path"},
		{"file:", "file: the URL names no directory: want file:///abs/dir, file:rel/dir or a plain path"},
		{"file:rel%zz", `file: malformed path: invalid URL escape "%zz"`},
	} {
		_, err := storeurl.Open(context.Background(), tc.raw)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Open(%q) error:\n got %v\nwant %s", tc.raw, err, tc.want)
		}
	}
}
