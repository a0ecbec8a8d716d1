package crypt_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/policy"
)

// A write policy over an encrypted store scans the plaintext (the handler
// is above the encryption), and the store holds only ciphertext: neither
// the secret nor the redacted text is readable in any object. On the file
// store, so that the objects are the ones on disk.
func TestPolicyThroughEncryption(t *testing.T) {
	const key = "AKIAZ3MSJV4WWNKWW5FG"
	ctx := t.Context()
	inner, err := file.Open(ctx, t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	s := mustWrap(t, inner, newConfig(t, crypt.GenerateIdentity))
	quiet := slog.New(slog.DiscardHandler)
	reject, err := memory.New(s, memory.Options{Logger: quiet, Policy: &policy.Policy{Secrets: policy.Reject}})
	if err != nil {
		t.Fatal(err)
	}
	if res := reject.Create(ctx, "/memories/a.md", "note "+key); res.Err == nil {
		t.Fatalf("reject over crypt wrote the secret: %+v", res)
	}
	redact, err := memory.New(s, memory.Options{Logger: quiet, Policy: &policy.Policy{Secrets: policy.Redact}})
	if err != nil {
		t.Fatal(err)
	}
	if res := redact.Create(ctx, "/memories/a.md", "note "+key); res.IsError {
		t.Fatal(res.Text)
	}
	if got, err := redact.ReadFile(ctx, "/memories/a.md"); err != nil || string(got) != "note [REDACTED:aws-access-token]" {
		t.Errorf("the file reads %q, %v", got, err)
	}
	n := 0
	for info, err := range inner.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := inner.Get(ctx, info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		for _, plain := range []string{key, "note", "REDACTED"} {
			if bytes.Contains(data, []byte(plain)) {
				t.Errorf("the stored object %q holds %q in plaintext", info.Key, plain)
			}
		}
		n++
	}
	if n == 0 {
		t.Fatal("nothing was stored")
	}
}
