package history_test

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
)

// rawScan returns the key of every raw object of s holding needle.
func rawScan(t *testing.T, s blob.Store, needle []byte) []string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	for _, i := range infos {
		data, _, err := s.Get(t.Context(), i.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, needle) || bytes.Contains([]byte(i.Key), needle) {
			hits = append(hits, i.Key)
		}
	}
	return hits
}

// digests returns what a store could keep that is derived from content:
// the content itself, and its MD5 (an S3 ETag) and SHA-256, in hex and in
// base64.
func digests(content string) map[string][]byte {
	m, h := md5.Sum([]byte(content)), sha256.Sum256([]byte(content))
	return map[string][]byte{
		"content":       []byte(content),
		"md5 hex":       []byte(hex.EncodeToString(m[:])),
		"md5 base64":    []byte(base64.StdEncoding.EncodeToString(m[:])),
		"sha256 hex":    []byte(hex.EncodeToString(h[:])),
		"sha256 base64": []byte(base64.StdEncoding.EncodeToString(h[:])),
	}
}

// recordVersions returns the store versions each record of s names (the
// one it replaced and the one it produced), by record key.
func recordVersions(t *testing.T, s blob.Store) map[string][2]string {
	t.Helper()
	out := map[string][2]string{}
	for _, k := range recordKeys(t, s) {
		data, _, err := s.Get(t.Context(), k, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		line, _, _ := bytes.Cut(data, []byte{'\n'})
		var h struct{ Prev, Ver string }
		if err := json.Unmarshal(line, &h); err != nil {
			t.Fatalf("record %s: %v", k, err)
		}
		out[k] = [2]string{h.Prev, h.Ver}
	}
	return out
}

// TestRedact writes a secret, moves the file (the rename's record holds
// the same content), replaces the secret and redacts the first version:
// both records lose the content, no raw object of the inner store holds the
// secret or the old record objects afterwards, and the records stay,
// marked with who and when.
func TestRedact(t *testing.T) {
	t.Run("mem", func(t *testing.T) {
		raw := mem.New(nil)
		redact(t, raw, raw)
	})
	t.Run("crypt", func(t *testing.T) {
		raw := mem.New(nil)
		redact(t, raw, newCrypt(t, raw))
	})
	t.Run("file", func(t *testing.T) {
		raw := newFile(t)
		redact(t, raw, raw)
	})
}

func redact(t *testing.T, raw, inner blob.Store) {
	const secret = "sk-ant-SECRET-1234567890"
	c := newClock()
	hs := wrap(t, inner, &history.Options{Actor: "agent", Now: c.Now})
	h := newHandler(t, hs)
	ctx := t.Context()
	must(t, h.Create(ctx, "/memories/k.md", "key: "+secret+"\n"))
	must(t, h.Rename(ctx, "/memories/k.md", "/memories/keys.md")) // the rename's record holds the secret too
	must(t, h.StrReplace(ctx, "/memories/keys.md", secret, "(removed)"))
	vs, err := hs.History(ctx, "keys.md")
	if err != nil {
		t.Fatal(err)
	}
	if hits := rawScan(t, inner, []byte(secret)); len(hits) != 2 {
		t.Fatalf("before: the secret is in %q, want the create's and the rename's records", hits)
	}
	content := "key: " + secret + "\n"
	// The store version the secret had (its ETag, on S3) is named by the
	// create's and the rename's records, and as the version replaced by
	// the str_replace's.
	erased := map[string]bool{}
	for k, pv := range recordVersions(t, inner) {
		data, _, _ := inner.Get(ctx, k, blob.MaxObjectBytes)
		if bytes.Contains(data, []byte(secret)) {
			erased[pv[1]] = true
		}
	}
	before := map[string][]byte{}
	for _, k := range recordKeys(t, raw) {
		data, _, err := raw.Get(ctx, k, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		before[k] = data
	}

	got, err := hs.Redact(blob.WithActor(ctx, "dpo@example.com"), "keys.md", vs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != vs[0].ID || got[1].ID != vs[1].ID {
		t.Fatalf("Redact returned %+v, want the create and the rename (same content)", got)
	}
	if hits := rawScan(t, inner, []byte(secret)); len(hits) != 0 {
		t.Errorf("after: the secret is still in %q", hits)
	}
	for name, d := range digests(content) {
		if hits := rawScan(t, raw, d); len(hits) != 0 {
			t.Errorf("after: the %s of the erased content is still in %q", name, hits)
		}
	}
	for k, pv := range recordVersions(t, inner) {
		if erased[pv[0]] || erased[pv[1]] {
			t.Errorf("after: record %s still names %q, a store version of the erased content (erased: %v)", k, pv, erased)
		}
	}
	// No raw object still holds the bytes of a redacted record's old
	// object (its ciphertext, with encryption below).
	for _, v := range got {
		for k, old := range before {
			if !bytes.Contains(old, []byte(v.ID)) && !bytes.Contains([]byte(k), []byte(v.ID)) {
				continue
			}
			if hits := rawScan(t, raw, old[len(old)-64:]); len(hits) != 0 {
				t.Errorf("the old object of %s is still in %q", k, hits)
			}
		}
	}
	at := time.Date(2026, 12, 1, 9, 0, 4, 0, time.UTC) // the clock's fourth reading: create, rename, str_replace, redact
	checkRows(t, "history after redaction", historyRows(t, hs, "keys.md"), []row{
		{Op: history.OpCreated, Path: "k.md", Actor: "agent", Size: 0, Redact: "dpo@example.com"},
		{Op: history.OpRenamed, Path: "keys.md", From: "k.md", Actor: "agent", Size: 0, Redact: "dpo@example.com"},
		{Op: history.OpModified, Path: "keys.md", Actor: "agent", Size: 15, Content: "key: (removed)\n", Current: true},
	})
	vs, _ = hs.History(ctx, "keys.md")
	if r := vs[0].Redacted; r == nil || !r.Time.Equal(at) || vs[0].SHA256 != "" {
		t.Errorf("redaction %+v, sha %q; want at %v and no hash", r, vs[0].SHA256, at)
	}
	if _, _, err := hs.Show(ctx, "keys.md", vs[0].ID); !errors.Is(err, history.ErrNoContent) {
		t.Errorf("Show of a redacted version: %v, want ErrNoContent", err)
	}
	if _, err := hs.Restore(ctx, "keys.md", vs[0].ID, writer(t, hs)); !errors.Is(err, history.ErrNoContent) {
		t.Errorf("Restore of a redacted version: %v, want ErrNoContent", err)
	}
	// Redacting again changes nothing.
	snap := snapshot(t, raw)
	if again, err := hs.Redact(ctx, "keys.md", vs[0].ID); err != nil || len(again) != 1 || again[0].Redacted.Actor != "dpo@example.com" {
		t.Errorf("second Redact: %+v, %v", again, err)
	}
	if !sameSnapshot(snap, snapshot(t, raw)) {
		t.Errorf("a second Redact changed the store")
	}
	// The audit trail shows the redaction as an event of its own.
	events, err := hs.Audit(ctx, history.AuditFilter{Actor: "dpo@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Op != history.OpRedacted || events[0].Version != vs[0].ID || !events[0].Time.Equal(at) {
		t.Errorf("audit of the redactor: %+v", events)
	}
}

// TestRedactCurrent checks that the current content cannot be redacted,
// and that nothing changes.
func TestRedactCurrent(t *testing.T) {
	inner := mem.New(nil)
	hs := wrap(t, inner, nil)
	h := newHandler(t, hs)
	must(t, h.Create(t.Context(), "/memories/a", "x"))
	must(t, h.StrReplace(t.Context(), "/memories/a", "x", "y"))
	must(t, h.StrReplace(t.Context(), "/memories/a", "y", "x")) // back to the first content
	vs, _ := hs.History(t.Context(), "a")
	snap := snapshot(t, inner)
	for _, v := range []history.Version{vs[0], vs[2]} {
		if _, err := hs.Redact(t.Context(), "a", v.ID); !errors.Is(err, history.ErrCurrentVersion) {
			t.Errorf("Redact of %s (the current content): %v, want ErrCurrentVersion", v.ID, err)
		}
	}
	if !sameSnapshot(snap, snapshot(t, inner)) {
		t.Errorf("a refused Redact changed the store")
	}
	if got, err := hs.Redact(t.Context(), "a", vs[1].ID); err != nil || len(got) != 1 {
		t.Errorf("Redact of an old version: %+v, %v", got, err)
	}
}
