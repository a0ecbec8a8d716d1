package main

import (
	"os"
	"path/filepath"
	"testing"
)

// An encrypted store opened without encrypt=age refuses put and cat: no
// plaintext goes in, no ciphertext comes out (issue 13.4).
func TestPlainAccessToEncryptedStore(t *testing.T) {
	keys, dir := t.TempDir(), t.TempDir()
	idFile, _ := newKey(t, keys, "id.txt")
	enc := "file:" + dir + "?encrypt=age&age_identity_file=" + idFile
	if code, _, errOut := cloudmem([]string{"--store", enc, "put", "/memories/a.md", "-"}, "secret\n", nil); code != 0 {
		t.Fatalf("encrypted put: exit %d, %s", code, errOut)
	}
	before, err := os.ReadFile(filepath.Join(dir, "a.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--store", dir, "put", "/memories/b.md", "-"},
		{"--store", "file:" + dir, "cat", "/memories/a.md"},
	} {
		code, out, errOut := cloudmem(args, "plaintext\n", nil)
		want := "cloudmem " + args[2] + ": this store is encrypted; open it with encrypt=age\n"
		if code != 1 || out != "" || errOut != want {
			t.Errorf("%q: exit %d\nstdout %q\nstderr %q\nwant stderr %q", args, code, out, errOut, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "b.md")); !os.IsNotExist(err) {
		t.Errorf("the refused put wrote b.md (stat: %v)", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "a.md")); string(after) != string(before) {
		t.Errorf("a.md changed")
	}
}
