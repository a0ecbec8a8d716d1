package crypt_test

// The URL hook (crypt/storeurl.go) and storeurl's guard, through real URLs
// over a local directory.

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// urlIdentityFile writes a new identity to a file of its own and returns the
// file and its recipient.
func urlIdentityFile(t *testing.T) (path, recipient string) {
	t.Helper()
	identity, recipient, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "identity.txt")
	if err := os.WriteFile(path, []byte(identity), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, recipient
}

// run executes one command over s and fails the test on an error result.
func run(t *testing.T, s blob.Store, input string) {
	t.Helper()
	h, err := memory.New(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res := h.Execute(context.Background(), []byte(input)); res.IsError {
		t.Fatalf("%s: %s", input, res.Text)
	}
}

// rawContents returns every object of the directory dir, below every wrapper.
func rawContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	s := rawFileStore(t, dir)
	out := map[string]string{}
	infos, err := blob.ListAll(context.Background(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		data, _, err := s.Get(context.Background(), info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		out[info.Key] = string(data)
	}
	return out
}

// TestPlainOpenOfEncryptedStore opens an encrypted store without
// encrypt=age: every command is refused with the guard's cause, nothing is
// written, and a store without the key object works as before.
func TestPlainOpenOfEncryptedStore(t *testing.T) {
	ctx := context.Background()
	t.Setenv(crypt.EnvIdentity, "")
	idFile, _ := urlIdentityFile(t)
	dir := t.TempDir()
	enc, err := storeurl.Open(ctx, "file:"+dir+"?encrypt=age&age_identity_file="+idFile)
	if err != nil {
		t.Fatal(err)
	}
	run(t, enc, `{"command":"create","path":"/memories/a.md","file_text":"secret"}`)
	blob.Close(enc)
	before := rawContents(t, dir)

	plain, err := storeurl.Open(ctx, "file:"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Close(plain)
	h, err := memory.New(plain, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const want = "Error: The memory storage failed: this store is encrypted; open it with encrypt=age"
	for _, in := range []string{
		`{"command":"view","path":"/memories/a.md"}`,
		`{"command":"view","path":"/memories"}`,
		`{"command":"create","path":"/memories/b.md","file_text":"plaintext"}`,
		`{"command":"delete","path":"/memories/a.md"}`,
	} {
		res := h.Execute(ctx, []byte(in))
		if !res.IsError || res.Text != want {
			t.Errorf("%s: %q (error %v), want %q", in, res.Text, res.IsError, want)
		}
	}
	if after := rawContents(t, dir); !maps.Equal(before, after) {
		t.Errorf("the refused commands changed the store: %v, want %v", slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
	}

	// A store with no key object is not refused.
	other, err := storeurl.Open(ctx, "file:"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Close(other)
	run(t, other, `{"command":"create","path":"/memories/b.md","file_text":"plain"}`)
}

// TestEncryptFingerprintParam pins the store key from the URL: a reader
// holding only the escrow identity, which did not make the store, reads it
// with age_key_fingerprint and is refused without it or with another.
func TestEncryptFingerprintParam(t *testing.T) {
	ctx := context.Background()
	t.Setenv(crypt.EnvIdentity, "")
	appFile, appRcpt := urlIdentityFile(t)
	escrowFile, escrowRcpt := urlIdentityFile(t)
	dir := t.TempDir()
	w, err := storeurl.Open(ctx, "file:"+dir+"?encrypt=age&age_identity_file="+appFile+"&age_recipients="+appRcpt+","+escrowRcpt)
	if err != nil {
		t.Fatal(err)
	}
	run(t, w, `{"command":"create","path":"/memories/a.md","file_text":"for the escrow"}`)
	blob.Close(w)
	raw := rawFileStore(t, dir)
	ids, err := crypt.LoadIdentities(appFile)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := crypt.ParseRecipients(appRcpt)
	if err != nil {
		t.Fatal(err)
	}
	byApp, err := crypt.Wrap(raw, crypt.Config{Recipients: rs, Identities: ids})
	if err != nil {
		t.Fatal(err)
	}
	fp, err := crypt.Fingerprint(ctx, byApp)
	if err != nil {
		t.Fatal(err)
	}
	escrowURL := "file:" + dir + "?encrypt=age&age_identity_file=" + escrowFile
	open := func(extra string) *memory.Handler {
		s, err := storeurl.Open(ctx, escrowURL+extra)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { blob.Close(s) })
		h, err := memory.New(s, memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	view := `{"command":"view","path":"/memories/a.md"}`
	if res := open("&age_key_fingerprint="+fp).Execute(ctx, []byte(view)); res.IsError || res.Text != "Here's the content of /memories/a.md with line numbers:\n     1\tfor the escrow" {
		t.Errorf("pinned escrow reader: %q", res.Text)
	}
	if res := open("").Execute(ctx, []byte(view)); !res.IsError {
		t.Errorf("unpinned escrow reader read the store: %q", res.Text)
	}
	other := strings.Repeat("0", 32)
	if res := open("&age_key_fingerprint="+other).Execute(ctx, []byte(view)); !res.IsError {
		t.Errorf("a reader pinned to another key read the store: %q", res.Text)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("G", 32)} {
		_, err := storeurl.Open(ctx, escrowURL+"&age_key_fingerprint="+bad)
		if err == nil || !strings.HasPrefix(err.Error(), "crypt: age_key_fingerprint") && !strings.HasSuffix(err.Error(), "(in age_key_fingerprint)") {
			t.Errorf("age_key_fingerprint=%q: err = %v, want a crypt: error naming age_key_fingerprint", bad, err)
		}
	}
}

// rawFileStore opens dir as a plain file store, below every wrapper.
func rawFileStore(t *testing.T, dir string) blob.Store {
	t.Helper()
	s, err := file.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blob.Close(s) })
	return s
}

// TestPlainURL checks the URL of the store beneath the encryption layer,
// which cloudmem rekey opens.
func TestPlainURL(t *testing.T) {
	for _, tc := range []struct {
		raw, inner, identity, fingerprint, err string
	}{
		{raw: "./memories", inner: "./memories"},
		{raw: "./a:b?encrypt=age", inner: "./a:b?encrypt=age"}, // a plain path has no parameters
		{raw: "s3://bucket/dir?region=eu", inner: "s3://bucket/dir?region=eu"},
		{raw: "file:///srv/m?encrypt=age&age_identity_file=/k/id.txt&prefix=p", inner: "file:///srv/m?prefix=p", identity: "/k/id.txt"},
		{raw: "redis://:hunter2@host:6379/0?encrypt=age&age_recipients=age1x", inner: "redis://:hunter2@host:6379/0"},
		{raw: "mem://?encrypt=age&age_key_fingerprint=00ff&readonly=1", inner: "mem:?readonly=1", fingerprint: "00ff"},
		{raw: "file:///x?%zz", err: `storeurl: malformed query: invalid URL escape "%zz"`},
		{raw: "redis://:hunter2@host:port", err: `storeurl: malformed URL: invalid port ":port" after host`},
	} {
		inner, keys, err := crypt.PlainURL(tc.raw)
		got := []string{inner, keys.IdentityFile, keys.KeyFingerprint, ""}
		if err != nil {
			got[3] = err.Error()
		}
		if want := []string{tc.inner, tc.identity, tc.fingerprint, tc.err}; !slices.Equal(got, want) {
			t.Errorf("PlainURL(%q) = %q, want %q", tc.raw, got, want)
		}
	}
}

// TestPlainParentOfEncryptedStore pins what the guard does not cover
// (issue 26 item 7; docs/encryption.md, "Plain stores beside encrypted
// ones"): a plain store opened at a parent of an encrypted store's prefix
// sees that prefix as an ordinary directory and can write plaintext into
// it; the encrypted store never takes such an object for memory.
func TestPlainParentOfEncryptedStore(t *testing.T) {
	ctx := context.Background()
	t.Setenv(crypt.EnvIdentity, "")
	idFile, _ := urlIdentityFile(t)
	dir := t.TempDir()
	enc, err := storeurl.Open(ctx, "file:"+dir+"?prefix=alice&encrypt=age&age_identity_file="+idFile)
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Close(enc)
	run(t, enc, `{"command":"create","path":"/memories/a.md","file_text":"secret"}`)
	parent, err := storeurl.Open(ctx, "file:"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Close(parent)
	run(t, parent, `{"command":"create","path":"/memories/alice/p.md","file_text":"plaintext"}`)
	if got := rawContents(t, dir)["alice/p.md"]; got != "plaintext" {
		t.Fatalf("the parent's write: %q; want the plaintext in the encrypted store's space", got)
	}
	h, err := memory.New(enc, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const want = "Error: The memory storage failed: an object is not encrypted"
	if res := h.Execute(ctx, []byte(`{"command":"view","path":"/memories/p.md"}`)); res.Text != want {
		t.Errorf("the encrypted store's view of the plaintext object: %q, want %q", res.Text, want)
	}
}
