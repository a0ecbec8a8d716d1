package storeurl_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"filippo.io/age"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	_ "github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Check finds every error of a URL that Open finds before it calls the
// backend, encryption's included, and opens nothing; Open reports the same
// error without calling the backend either.
func TestCheck(t *testing.T) {
	opened := 0
	m := storeurl.DefaultMux.Clone()
	m.Register("probe", storeurl.Backend{Params: []string{"region"}, Open: func(context.Context, *storeurl.Location) (blob.Store, error) {
		opened++
		return mem.New(nil), nil
	}})
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(t.TempDir(), "key.txt")
	if err := os.WriteFile(key, []byte(id.String()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.txt")

	for raw, want := range map[string]string{
		"probe://?encrypt=age&age_identity_file=" + missing: "crypt: identity file: open " + missing + ": no such file or directory",
		"probe://?encrypt=rot13":                            "crypt: unknown encrypt value: the only encryption is encrypt=age",
		"probe://?age_recipients=age1xyz":                   "crypt: age_recipients needs encrypt=age",
		"probe://?prefix=notes/.cloudmem/history":           "storeurl: prefix=\"notes/.cloudmem/history\": the segment .cloudmem is reserved for cloudmem's bookkeeping",
		"probe://?max_files=-3":                             "storeurl: max_files=\"-3\": want a whole number from 1 to 1000000000, or off",
		"probe://?secrets=loud":                             "storeurl: secrets=\"loud\": want off, warn, redact or reject",
		"probe://?timeout=0s":                               "storeurl: timeout=\"0s\": want a Go duration from 1ms to 24h, such as 1s, 500ms or 2m",
		"probe://?zone=1": "storeurl: probe: unknown URL parameter \"zone\" (probe accepts: region; every scheme accepts: " +
			"age_identity_file, age_key_fingerprint, age_recipients, encrypt, " +
			"max_file_bytes, max_files, policy, prefix, readonly, secrets, timeout, view_limit)",
		"nosuch://bucket": "storeurl: unknown scheme \"nosuch\" (registered: capture, capture-native, mem, probe)",
		"probe://?prefix=a&region=x&max_files=2&encrypt=age&age_identity_file=" + key: "",
	} {
		checkErr := m.Check(raw)
		if opened != 0 {
			t.Fatalf("Check(%q) opened the backend", raw)
		}
		if got := errText(checkErr); got != want {
			t.Errorf("Check(%q) = %q, want %q", raw, got, want)
			continue
		}
		s, openErr := m.Open(t.Context(), raw)
		if got := errText(openErr); got != want {
			t.Errorf("Open(%q) = %q, want Check's %q", raw, got, want)
		}
		if want != "" && opened != 0 {
			t.Errorf("Open(%q) called the backend for a URL Check refuses", raw)
		}
		if openErr == nil {
			blob.Close(s)
		}
		opened = 0
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
