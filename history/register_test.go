package history_test

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/storeurl"
)

// TestStoreURL opens stores from URLs with the history parameters: history
// sits above encryption (the records are encrypted), the actor and
// retention come from the URL, history=off and no parameter leave the
// store unwrapped, and bad values are refused before anything opens.
func TestStoreURL(t *testing.T) {
	if i, j := slices.Index(storeurl.Wrappers(), "encrypt"), slices.Index(storeurl.Wrappers(), "history"); i < 0 || j < i {
		t.Fatalf("wrappers in order %q: want history after (above) encrypt", storeurl.Wrappers())
	}
	ctx := t.Context()
	dir := t.TempDir()
	id, _, err := crypt.GenerateIdentity()
	if err != nil {
		t.Fatal(err)
	}
	idFile := filepath.Join(t.TempDir(), "id.txt")
	if err := os.WriteFile(idFile, []byte(id+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := "file://" + dir + "?encrypt=age&age_identity_file=" + url.QueryEscape(idFile) +
		"&history=on&history_actor=url-actor&history_keep=1"
	s, err := storeurl.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer blob.Close(s)
	hs, ok := s.(*history.Store)
	if !ok {
		t.Fatalf("storeurl.Open gave a %T, want a *history.Store on top", s)
	}
	h := newHandler(t, hs)
	const secret = "a memory worth keeping private"
	must(t, h.Create(ctx, "/memories/n.md", secret+"\n"))
	must(t, h.StrReplace(ctx, "/memories/n.md", "private", "secret"))
	vs, err := hs.History(ctx, "n.md")
	if err != nil || len(vs) != 2 || vs[0].Actor != "url-actor" {
		t.Fatalf("history %+v, %v", vs, err)
	}
	if res, err := hs.Prune(ctx); err != nil || res.Removed != 1 {
		t.Errorf("Prune with history_keep=1: %+v, %v", res, err)
	}
	// Every file on disk, records included, is ciphertext.
	plain, err := file.Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if keys := recordKeys(t, plain); len(keys) != 1 {
		t.Errorf("records on disk %q, want 1 after the prune", keys)
	}
	if hits := rawScan(t, plain, []byte("memory worth")); len(hits) != 0 {
		t.Errorf("plaintext on disk in %q", hits)
	}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err == nil && bytes.Contains(data, []byte("memory worth")) {
			t.Errorf("plaintext in %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, q := range []string{"", "?history=off"} {
		s, err := storeurl.Open(ctx, "file://"+t.TempDir()+q)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := s.(*history.Store); ok {
			t.Errorf("%q opened a history store", q)
		}
		blob.Close(s)
	}
	for q, want := range map[string]string{
		"?history=maybe":              "history: history=\"maybe\": want on or off",
		"?history_keep=2":             "history: history_keep needs history=on",
		"?history=on&history_keep=x":  "history: history_keep=\"x\": want a whole number, 0 or more",
		"?history=on&history=on":      "storeurl: parameter history given 2 times",
		"?history=on&history_max_age": "history: history_max_age=\"\": want a duration such as 720h or 30d",
	} {
		_, err := storeurl.Open(ctx, "file://"+t.TempDir()+q)
		if err == nil || err.Error() != want {
			t.Errorf("Open(%q): %v, want %s", q, err, want)
		}
	}
}
