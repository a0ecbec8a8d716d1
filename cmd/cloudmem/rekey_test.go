package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
)

// newKey runs keygen into dir/name and returns the file and its recipient.
func newKey(t *testing.T, dir, name string) (path, recipient string) {
	t.Helper()
	path = filepath.Join(dir, name)
	code, stdout, stderr := cloudmem([]string{"keygen", "-o", path}, "", nil)
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "age1") {
		t.Fatalf("keygen -o %s = %d\nstdout:\n%s\nstderr:\n%s", path, code, stdout, stderr)
	}
	return path, strings.TrimSuffix(stdout, "\n")
}

// encrypted opens the directory dir as a crypt store that reads with the
// identities of identityFile and writes to its recipient.
func encrypted(t *testing.T, dir, identityFile, recipient string) blob.Store {
	t.Helper()
	inner, err := file.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := crypt.LoadIdentities(identityFile)
	if err != nil {
		t.Fatal(err)
	}
	rcpts, err := crypt.ParseRecipients(recipient)
	if err != nil {
		t.Fatal(err)
	}
	s, err := crypt.Wrap(inner, crypt.Config{Recipients: rcpts, Identities: ids})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRekey encrypts a directory store to one key, rekeys it to another:
// afterwards only the new key reads it. A second rekey, resumed with the
// new identity, finds nothing to do; one with the old identity alone fails.
func TestRekey(t *testing.T) {
	ctx := context.Background()
	keys, dir := t.TempDir(), t.TempDir()
	oldFile, oldRecipient := newKey(t, keys, "old.txt")
	newFile, newRecipient := newKey(t, keys, "new.txt")
	files := map[string]string{"notes/a.md": "alpha", "b.md": "bravo", "empty": ""}
	before := encrypted(t, dir, oldFile, oldRecipient)
	for key, content := range files {
		if _, err := before.Put(ctx, key, []byte(content), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}

	runCases(t, dir, []cliCase{
		// The new identity too, so that the rekey vouches for the store's
		// key with it (crypt.Config.KeyFingerprint): readers holding only
		// the new key then trust the store without a pinned fingerprint.
		{args: []string{"rekey", "--to-recipients", newRecipient, "--identity-file", oldFile, "--identity-file", newFile},
			stdout: "rekey done: 3 objects, each encrypted to 1 recipient\n"},
	})
	if _, _, err := encrypted(t, dir, oldFile, oldRecipient).Get(ctx, "b.md", blob.MaxObjectBytes); !errors.Is(err, crypt.ErrWrongKey) {
		t.Errorf("after the rekey the old key reads b.md: %v; want ErrWrongKey", err)
	}
	if got := storeContents(t, encrypted(t, dir, newFile, newRecipient)); !equalMaps(got, files) {
		t.Errorf("after the rekey the new key reads %q, want %q", got, files)
	}

	// The store URL may carry the encryption parameters: rekey takes the
	// identity from there and works on the stored objects.
	url := "file://" + dir + "?encrypt=age&age_identity_file=" + newFile
	runCases(t, url, []cliCase{
		{args: []string{"rekey", "--to-recipients", newRecipient}, stdout: "rekey done: 3 objects, each encrypted to 1 recipient\n"},
		{args: []string{"rekey", "--to-recipients", newRecipient + "," + oldRecipient, "--identity-file", oldFile}, code: 1,
			stderr: `cloudmem rekey: crypt: no configured identity can decrypt the object: ".cloudmem/crypt-key": no identity matches its recipients` + "\n"},
	})

	identity, err := os.ReadFile(newFile)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cloudmem([]string{"--store", dir, "rekey", "--to-recipients", newRecipient + "," + oldRecipient}, "",
		map[string]string{crypt.EnvIdentity: string(identity)})
	if want := "rekey done: 3 objects, each encrypted to 2 recipients\n"; code != 0 || stdout != want || stderr != "" {
		t.Errorf("rekey with $%s = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", crypt.EnvIdentity, code, stdout, stderr, want)
	}
	if got := storeContents(t, encrypted(t, dir, oldFile, oldRecipient)); !equalMaps(got, files) {
		t.Errorf("after the rekey to both keys the old key reads %q, want %q", got, files)
	}

	runCases(t, dir, []cliCase{
		{args: []string{"rekey", "--to-recipients", newRecipient}, code: 1,
			stderr: "cloudmem rekey: no identity to read the store with: give --identity-file FILE, age_identity_file in the store URL, or set $CLOUDMEM_AGE_IDENTITY\n"},
		{args: []string{"rekey", "--to-recipients", newRecipient, "--identity-file", filepath.Join(keys, "nope")}, code: 1,
			stderr: "cloudmem rekey: crypt: identity file: open " + filepath.Join(keys, "nope") + ": no such file or directory\n"},
	})
}
