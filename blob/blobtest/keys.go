package blobtest

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// keyTests cover the key grammar: every valid key works as itself, every
// invalid one is refused before anything is touched.
var keyTests = []test{
	{"OddKeys", testOddKeys},
	{"MaxLenKey", testMaxLenKey},
	{"InvalidKeys", testInvalidKeys},
}

// oddKeys are valid keys that trip up URL encoders, shells and file systems.
var oddKeys = []string{
	"with space",
	"trailing space ",
	" leading space",
	"unicode/日本語/ファイル.md",
	"caf\u00e9",  // NFC
	"cafe\u0301", // NFD: a different key from the NFC one
	"emoji/\U0001F600",
	"plus+sign",
	"percent%sign",
	"percent%20encoded",
	"percent%2Fslash",
	"hash#mark",
	"question?mark",
	"amp&ersand",
	"equals=sign",
	"tilde~",
	"single'quote",
	`double"quote`,
	"star*",
	"colon:name",
	"at@sign",
	"bang!",
	`back\slash`,
	"brackets[]{}()<>",
	"semi;colon,comma",
	"dollar$`tick`|pipe^",
	".hidden",
	".cloudmem/key", // where the encryption layer keeps its key: an ordinary key to a Store
	"dir/.hidden/.file",
	"...three dots",
	"..a",
	"a..",
	"C1\u0085control",
	"nbsp\u00a0space",
	strings.Repeat("x", 255),
	"seg/" + strings.Repeat("y", 255) + "/z",
}

func testOddKeys(t *testing.T, s blob.Store) {
	for i, key := range oddKeys {
		if err := blob.CheckKey(key); err != nil {
			t.Fatalf("blobtest bug: %q is not a valid key: %v", key, err)
		}
		info := put(t, s, key, []byte{byte(i), 'v'})
		if info.Key != key {
			t.Fatalf("Put(%q) Info.Key = %q", key, info.Key)
		}
	}
	for i, key := range oddKeys {
		wantContent(t, s, key, []byte{byte(i), 'v'})
		if st, err := s.Stat(t.Context(), key); err != nil || st.Key != key {
			t.Fatalf("Stat(%q) = Key %q, %v", key, st.Key, err)
		}
	}
	want := slices.Clone(oddKeys)
	slices.Sort(want)
	wantKeys(t, s, "", want...)
	for _, key := range oddKeys {
		if err := s.Delete(t.Context(), key, blob.Cond{}); err != nil {
			t.Fatalf("Delete(%q): %v", key, err)
		}
		wantAbsent(t, s, key)
	}
	wantKeys(t, s, "")
}

func testMaxLenKey(t *testing.T, s blob.Store) {
	// Five segments of 204 bytes and four slashes: exactly MaxKeyLen bytes.
	seg := strings.Repeat("m", 204)
	key := strings.Join([]string{seg, seg, seg, seg, seg}, "/")
	if len(key) != blob.MaxKeyLen {
		t.Fatalf("blobtest bug: key is %d bytes", len(key))
	}
	put(t, s, key, []byte("longest"))
	wantContent(t, s, key, []byte("longest"))
	wantKeys(t, s, "", key)
	wantKeys(t, s, seg+"/", key)
	if err := s.Delete(t.Context(), key, blob.Cond{}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	wantKeys(t, s, "")
}

// invalidKeys break the grammar in the blob package documentation.
var invalidKeys = []string{
	"",
	"/",
	"/a",
	"a/",
	"a//b",
	".",
	"..",
	"./a",
	"a/.",
	"a/..",
	"../a",
	"a/../b",
	"a/./b",
	"nul\x00byte",
	"new\nline",
	"tab\tchar",
	"esc\x1b",
	"del\x7f",
	"bad utf8 \xff",
	"x" + strings.Repeat("/abc", blob.MaxKeyLen/4),
}

func testInvalidKeys(t *testing.T, s blob.Store) {
	ctx := t.Context()
	existing := put(t, s, "a", []byte("a")).Version
	for _, key := range invalidKeys {
		if blob.CheckKey(key) == nil {
			t.Fatalf("blobtest bug: %q is a valid key", key)
		}
		_, _, err := s.Get(ctx, key, blob.MaxObjectBytes)
		wantErr(t, "Get("+quote(key)+")", err, blob.ErrInvalidKey)
		_, err = s.Stat(ctx, key)
		wantErr(t, "Stat("+quote(key)+")", err, blob.ErrInvalidKey)
		_, err = s.Put(ctx, key, []byte("x"), blob.Cond{})
		wantErr(t, "Put("+quote(key)+")", err, blob.ErrInvalidKey)
		_, err = s.Put(ctx, key, []byte("x"), blob.Cond{IfAbsent: true})
		wantErr(t, "Put("+quote(key)+", IfAbsent)", err, blob.ErrInvalidKey)
		_, err = s.Put(ctx, key, []byte("x"), blob.Cond{IfVersion: existing})
		wantErr(t, "Put("+quote(key)+", IfVersion)", err, blob.ErrInvalidKey)
		wantErr(t, "Delete("+quote(key)+")", s.Delete(ctx, key, blob.Cond{}), blob.ErrInvalidKey)
		wantErr(t, "Rename(a, "+quote(key)+")", blob.Rename(ctx, s, "a", key), blob.ErrInvalidKey)
		wantErr(t, "Rename("+quote(key)+", b)", blob.Rename(ctx, s, key, "b"), blob.ErrInvalidKey)
		wantErr(t, "DeleteTree("+quote(key)+")", blob.DeleteTree(ctx, s, key), blob.ErrInvalidKey)
	}
	wantKeys(t, s, "", "a")
	wantContent(t, s, "a", []byte("a"))
}

func quote(key string) string {
	if len(key) > 40 {
		key = key[:40] + "..."
	}
	return strconv.Quote(key)
}
