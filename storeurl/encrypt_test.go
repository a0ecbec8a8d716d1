package storeurl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// identityFile writes a new identity to a file of its own and returns the
// file, the identity file's content and its recipient.
func identityFile(t *testing.T) (path, identity, recipient string) {
	t.Helper()
	identity, recipient, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(t.TempDir(), "identity.txt")
	if err := os.WriteFile(path, []byte(identity), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, identity, recipient
}

// execute runs one memory command over s and returns the result text,
// failing the test on an error result.
func execute(t *testing.T, s blob.Store, input string) string {
	t.Helper()
	h, err := memory.New(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := h.Execute(context.Background(), []byte(input))
	if res.IsError {
		t.Fatalf("%s: %s", input, res.Text)
	}
	return res.Text
}

// TestEncryptAge writes a memory through a URL with encrypt=age and checks
// what the backend's store receives: ciphertext only, which the identity
// reads back, under a readonly wrapper when the URL asks for one.
func TestEncryptAge(t *testing.T) {
	ctx := context.Background()
	t.Setenv(crypt.EnvIdentity, "") // the identity comes from the URL here
	idFile, identity, recipient := identityFile(t)
	const secret = "the launch code is 0000"
	s, err := storeurl.Open(ctx, "capture://?prefix=agent-7&encrypt=age&age_identity_file="+idFile)
	if err != nil {
		t.Fatal(err)
	}
	execute(t, s, `{"command":"create","path":"/memories/notes/plan.md","file_text":"`+secret+`"}`)
	want := "Here's the content of /memories/notes/plan.md with line numbers:\n     1\t" + secret
	if got := execute(t, s, `{"command":"view","path":"/memories/notes/plan.md"}`); got != want {
		t.Errorf("view = %q, want %q", got, want)
	}

	_, inner := captured.last()
	stored := storeContents(t, inner)
	var count string // the handler's file count, encrypted like the rest
	for k, v := range stored {
		if memory.IsBookkeeping(strings.TrimPrefix(k, "agent-7/")) {
			count = v
		}
	}
	if len(stored) != 3 || stored["agent-7/.cloudmem/crypt-key"] == "" || !strings.HasPrefix(count, "cloudmem-age/v1") {
		t.Errorf("the backend holds %d objects, want agent-7/notes/plan.md, agent-7/.cloudmem/crypt-key and the handler's file count, encrypted: %q",
			len(stored), keysOf(stored))
	}
	raw := stored["agent-7/notes/plan.md"]
	if strings.Contains(raw, secret) || !strings.HasPrefix(raw, "cloudmem-age/v1") {
		t.Errorf("the backend holds plaintext, or no ciphertext: %q", raw[:min(len(raw), 40)])
	}

	// The object was encrypted to the identity's own recipient: crypt
	// alone, with that key, reads it from the backend's store.
	ids, err := crypt.ParseIdentities(identity)
	if err != nil {
		t.Fatal(err)
	}
	rcpts, err := crypt.ParseRecipients(recipient)
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := blob.Prefix(inner, "agent-7")
	if err != nil {
		t.Fatal(err)
	}
	direct, err := crypt.Wrap(scoped, crypt.Config{Recipients: rcpts, Identities: ids})
	if err != nil {
		t.Fatal(err)
	}
	if data, _, err := direct.Get(ctx, "notes/plan.md", blob.MaxObjectBytes); err != nil || string(data) != secret {
		t.Errorf("crypt.Wrap over the backend's store reads %q, %v; want %q", data, err, secret)
	}

	ro, err := storeurl.Open(ctx, "capture://?encrypt=age&readonly=true&age_identity_file="+idFile)
	if err != nil {
		t.Fatal(err)
	}
	if !blob.IsReadOnly(ro) {
		t.Error("encrypt=age&readonly=true is not read-only")
	}
}

// storeContents returns every object of s as key → content.
func storeContents(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
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

func keysOf(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestEncryptRecipients checks where the keys come from: the identity from
// $CLOUDMEM_AGE_IDENTITY when the URL names no file, the recipients from
// age_recipients (here adding an escrow key, which can then read every
// object on its own) or else from the identity itself.
func TestEncryptRecipients(t *testing.T) {
	ctx := context.Background()
	_, appIdentity, appRecipient := identityFile(t)
	_, escrowIdentity, escrowRecipient := identityFile(t)
	escrowIDs, err := crypt.ParseIdentities(escrowIdentity)
	if err != nil {
		t.Fatal(err)
	}
	escrowRcpts, err := crypt.ParseRecipients(escrowRecipient)
	if err != nil {
		t.Fatal(err)
	}
	// escrowRead reads key from the backend's store with the escrow key,
	// which did not make the store's integrity key and so pins it (fp).
	var fp string
	escrowRead := func(key string) (string, error) {
		_, inner := captured.last()
		s, err := crypt.Wrap(inner, crypt.Config{Recipients: escrowRcpts, Identities: escrowIDs, KeyFingerprint: fp})
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := s.Get(ctx, key, blob.MaxObjectBytes)
		return string(data), err
	}

	t.Setenv(crypt.EnvIdentity, appIdentity)
	both, err := storeurl.Open(ctx, "capture://?encrypt=age&age_recipients="+appRecipient+",+"+escrowRecipient)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := both.Put(ctx, "a.md", []byte("for both keys"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if fp, err = crypt.Fingerprint(ctx, both); err != nil {
		t.Fatal(err)
	}
	if got, err := escrowRead("a.md"); err != nil || got != "for both keys" {
		t.Errorf("the escrow key reads %q, %v; want \"for both keys\"", got, err)
	}

	own, err := storeurl.Open(ctx, "capture://?encrypt=age")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := own.Put(ctx, "b.md", []byte("app only"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if data, _, err := own.Get(ctx, "b.md", blob.MaxObjectBytes); err != nil || string(data) != "app only" {
		t.Errorf("the app key reads %q, %v; want \"app only\"", data, err)
	}
	if got, err := escrowRead("b.md"); !errors.Is(err, crypt.ErrWrongKey) {
		t.Errorf("the escrow key reads %q, %v from a store encrypted to the app key alone; want ErrWrongKey", got, err)
	}
}

func TestEncryptErrors(t *testing.T) {
	idFile, identity, recipient := identityFile(t)
	_, _, other := identityFile(t)
	secretKey := strings.TrimSpace(identity[strings.Index(identity, "AGE-SECRET-KEY-"):])
	missing := filepath.Join(t.TempDir(), "nope.txt")
	garbage := filepath.Join(t.TempDir(), "garbage.txt")
	if err := os.WriteFile(garbage, []byte("# a comment\nnot a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		raw, env, want string
	}{
		{raw: "mem://?encrypt=age&age_identity_file=" + missing,
			want: "storeurl: encrypt=age: crypt: identity file: open " + missing + ": no such file or directory"},
		{raw: "mem://?encrypt=age&age_identity_file=" + garbage,
			want: "storeurl: encrypt=age: crypt: identities line 2 is not a valid age identity (in " + garbage + ")"},
		{raw: "mem://?encrypt=age&age_identity_file=",
			want: "storeurl: age_identity_file is empty"},
		{raw: "mem://?encrypt=age",
			want: "storeurl: encrypt=age needs an identity: age_identity_file=PATH, or the identity file's content in $CLOUDMEM_AGE_IDENTITY"},
		{raw: "mem://?encrypt=age", env: "garbage",
			want: "storeurl: encrypt=age: crypt: identities line 1 is not a valid age identity (in $CLOUDMEM_AGE_IDENTITY)"},
		{raw: "mem://?encrypt=aes&age_identity_file=" + idFile,
			want: "storeurl: unknown encrypt value: the only encryption is encrypt=age"},
		{raw: "mem://?encrypt=&age_identity_file=" + idFile,
			want: "storeurl: unknown encrypt value: the only encryption is encrypt=age"},
		{raw: "mem://?age_identity_file=" + idFile,
			want: "storeurl: age_identity_file needs encrypt=age"},
		{raw: "mem://?age_recipients=" + recipient,
			want: "storeurl: age_recipients needs encrypt=age"},
		{raw: "mem://?encrypt=age&age_identity_file=" + idFile + "&age_recipients=ssh-ed25519+AAAA",
			want: "storeurl: age_recipients: crypt: recipient 1 is not a valid age public key (age1... or age1pq1...)"},
		{raw: "mem://?encrypt=age&age_identity_file=" + idFile + "&age_recipients=" + recipient + "," + secretKey,
			want: "storeurl: age_recipients: crypt: recipient 2 is not a valid age public key (age1... or age1pq1...)"},
		{raw: "mem://?encrypt=age&age_identity_file=" + idFile + "&age_recipients=" + recipient + ",",
			want: "storeurl: age_recipients: recipient 2 is empty"},
		{raw: "mem://?encrypt=age&age_identity_file=" + idFile + "&age_recipients=" + other,
			want: "storeurl: encrypt=age: crypt: none of the identities is the private key of a recipient: the store could not read what it writes"},
		{raw: "mem://?encrypt=" + secretKey, env: identity,
			want: "storeurl: unknown encrypt value: the only encryption is encrypt=age"},
		// There is no parameter that takes a private key: one given
		// anyway is an unknown parameter, named but not repeated.
		{raw: "mem://?encrypt=age&age_identity=" + secretKey, env: identity,
			want: `storeurl: mem: unknown URL parameter "age_identity" (every scheme accepts: age_identity_file, age_key_fingerprint, age_recipients, encrypt, max_file_bytes, max_files, prefix, readonly, timeout, view_limit)`},
	} {
		t.Setenv(crypt.EnvIdentity, tc.env)
		s, err := storeurl.Open(context.Background(), tc.raw)
		if err == nil {
			t.Errorf("Open(%q) = %v, want error %q", tc.raw, s, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Open(%q) error:\n got %s\nwant %s", tc.raw, err, tc.want)
		}
		if strings.Contains(err.Error(), "AGE-SECRET-KEY") || strings.Contains(strings.ToUpper(err.Error()), secretKey) {
			t.Errorf("Open(%q) error shows key material: %s", tc.raw, err)
		}
	}
}
