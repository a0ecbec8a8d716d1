package integration

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// TestS3RedactLeavesNoDigest writes a secret, moves the file, replaces the
// secret and redacts the first version on MinIO, then reads every raw
// object of the store (key, content and version): none holds the erased
// content, nor its MD5 (the ETag S3 gave it, which the records named as
// the version a change produced and the next one replaced) or SHA-256, in
// hex or base64.
func TestS3RedactLeavesNoDigest(t *testing.T) {
	raw := newS3Store(t)
	hs, err := history.New(raw, &history.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(hs, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	const secret = "sk-ant-SECRET-0987654321"
	content := "key: " + secret + "\n"
	for _, r := range []memory.Result{
		h.Create(ctx, "/memories/k.md", content),
		h.Rename(ctx, "/memories/k.md", "/memories/keys.md"),
		h.StrReplace(ctx, "/memories/keys.md", secret, "(removed)"),
	} {
		if r.IsError {
			t.Fatal(r.Text)
		}
	}
	m, s := md5.Sum([]byte(content)), sha256.Sum256([]byte(content))
	needles := map[string]string{
		"content":       secret,
		"md5 hex":       hex.EncodeToString(m[:]),
		"md5 base64":    base64.StdEncoding.EncodeToString(m[:]),
		"sha256 hex":    hex.EncodeToString(s[:]),
		"sha256 base64": base64.StdEncoding.EncodeToString(s[:]),
	}
	scan := func() map[string][]string {
		infos, err := blob.ListAll(ctx, raw, "")
		if err != nil {
			t.Fatal(err)
		}
		hits := map[string][]string{}
		for _, i := range infos {
			data, info, err := raw.Get(ctx, i.Key, blob.MaxObjectBytes)
			if err != nil {
				t.Fatal(err)
			}
			for name, n := range needles {
				if bytes.Contains(data, []byte(n)) || bytes.Contains([]byte(i.Key+info.Version+i.Version), []byte(n)) {
					hits[name] = append(hits[name], i.Key)
				}
			}
		}
		return hits
	}
	if hits := scan(); len(hits["content"]) != 2 || len(hits["md5 hex"]) == 0 {
		t.Fatalf("before: %v, want the content in the create's and the rename's records, and its ETag named", hits)
	}
	vs, err := hs.History(ctx, "keys.md")
	if err != nil {
		t.Fatal(err)
	}
	got, err := hs.Redact(ctx, "keys.md", vs[0].ID)
	if err != nil || len(got) != 2 {
		t.Fatalf("Redact: %+v, %v; want the create and the rename", got, err)
	}
	if hits := scan(); len(hits) != 0 {
		t.Errorf("after: what is derived from the erased content is still in the store: %v", hits)
	}
	// The history still replays: three versions, the last current.
	vs, err = hs.History(ctx, "keys.md")
	if err != nil || len(vs) != 3 || !vs[2].Current || vs[0].Redacted == nil || vs[1].Redacted == nil {
		t.Errorf("history after redaction: %+v, %v", vs, err)
	}
}
