package crypt_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

// The memory handler reports a crypt failure with the error's ModelCause.
var _ memory.Causer = (*crypt.Error)(nil)

// TestMemorySuite runs the handler's SPEC suite over an encrypted store: the
// six commands behave exactly as over a plain one.
func TestMemorySuite(t *testing.T) {
	cfg := newConfig(t, crypt.GenerateIdentity)
	newStore := func(t *testing.T) blob.Store { return mustWrap(t, mem.New(nil), cfg) }
	memorytest.Run(t, newStore)
	memorytest.RunConcurrency(t, newStore)
}

// TestHandlerReportsCryptErrors checks what the model reads, and what the
// handler logs, when an object cannot be decrypted or verified: the
// contract's storage failure with a short cause, and never plaintext or
// key material.
func TestHandlerReportsCryptErrors(t *testing.T) {
	const secretText = "the user's password hint is 'blue whale'"
	appID, app, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	strangerID, stranger, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	cfgFor := func(identity, recipient string) crypt.Config {
		ids, err := crypt.ParseIdentities(identity)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := crypt.ParseRecipients(recipient)
		if err != nil {
			t.Fatal(err)
		}
		return crypt.Config{Recipients: rs, Identities: ids}
	}
	inner := mem.New(nil)
	s := mustWrap(t, inner, cfgFor(appID, app))
	for _, key := range []string{"a.md", "b.md"} {
		if _, err := s.Put(t.Context(), key, []byte(secretText), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	// Damage a.md: swap in b.md's ciphertext, bound to b.md.
	b, _, err := inner.Get(t.Context(), "b.md", blob.MaxObjectBytes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Put(t.Context(), "a.md", b, blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := inner.Put(t.Context(), "plain.md", []byte(secretText), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	view := func(path string) []byte {
		return []byte(`{"command":"view","path":"` + path + `"}`)
	}
	for _, tc := range []struct {
		store blob.Store
		input []byte
		want  string
	}{
		{s, view("/memories/a.md"), "Error: The memory storage failed: an object failed its integrity check"},
		{s, view("/memories/plain.md"), "Error: The memory storage failed: an object is not encrypted"},
		{mustWrap(t, inner, cfgFor(strangerID, stranger)), view("/memories/b.md"),
			"Error: The memory storage failed: an object could not be decrypted with the configured identities"},
		{s, view("/memories/b.md"), "Here's the content of /memories/b.md with line numbers:\n     1\t" + secretText},
		// A directory view reads no object: sizes come from the listing
		// (and an object not in the format shows as 0 bytes).
		{s, view("/memories"), "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			"80B\t/memories\n40B\t/memories/a.md\n40B\t/memories/b.md\n0B\t/memories/plain.md"},
	} {
		var logs bytes.Buffer
		h, err := memory.New(tc.store, memory.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		got := h.Execute(t.Context(), tc.input)
		if got.Text != tc.want || got.IsError != strings.HasPrefix(tc.want, "Error: ") {
			t.Errorf("%s: got %+v, want %q", tc.input, got, tc.want)
		}
		for _, secret := range []string{secretText, appID, strangerID, "AGE-SECRET-KEY"} {
			if got.IsError && strings.Contains(got.Text, secret) || strings.Contains(logs.String(), strings.TrimSpace(secret)) {
				t.Errorf("%s: the result or the log holds a secret; log: %s", tc.input, logs.String())
			}
		}
	}
}
