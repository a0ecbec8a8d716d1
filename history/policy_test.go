package history_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/policy"
)

// Under a write policy, history records what was written: a rejected write
// leaves no record, a redacted one records the redacted text. No record,
// version or audit entry holds the secret.
func TestPolicyLeavesNoSecretInHistory(t *testing.T) {
	const key = "AKIAZ3MSJV4WWNKWW5FG"
	ctx := t.Context()
	inner := mem.New(nil)
	hs := wrap(t, inner, nil)
	quiet := slog.New(slog.DiscardHandler)
	for _, mode := range []policy.Mode{policy.Reject, policy.Redact} {
		h, err := memory.New(hs, memory.Options{Logger: quiet, Policy: &policy.Policy{Secrets: mode}})
		if err != nil {
			t.Fatal(err)
		}
		h.Create(ctx, "/memories/a.md", "one\ntwo\n")
		h.Create(ctx, "/memories/k.md", "k "+key)
		h.StrReplace(ctx, "/memories/a.md", "two", key)
		h.Insert(ctx, "/memories/a.md", 0, key)
		if _, err := h.Write(ctx, "/memories/w.md", []byte(key), ""); mode == policy.Reject && err == nil {
			t.Error("Write, reject: no error")
		}
	}
	records := 0
	for info, err := range inner.List(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := inner.Get(ctx, info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(key)) {
			t.Errorf("the stored object %q holds the secret", info.Key)
		}
		if strings.HasPrefix(info.Key, ".cloudmem/history/") {
			records++
		}
	}
	if records == 0 {
		t.Error("no history record was written")
	}
}
