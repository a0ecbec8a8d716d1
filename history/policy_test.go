package history_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
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

// History records what the write policy did to each version, by rule and
// line, never the secret: redact and warn each leave their words on the
// version they wrote and on its audit event, a clean write leaves none, and
// redacting the version erases them with the content they were found in.
func TestPolicyActionRecorded(t *testing.T) {
	const key = "AKIAZ3MSJV4WWNKWW5FG"
	ctx := t.Context()
	hs := wrap(t, mem.New(nil), nil)
	quiet := slog.New(slog.DiscardHandler)
	handler := func(mode policy.Mode) *memory.Handler {
		h, err := memory.New(hs, memory.Options{Logger: quiet, Policy: &policy.Policy{Secrets: mode}})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	redact, warn := handler(policy.Redact), handler(policy.Warn)
	for _, r := range []memory.Result{
		redact.Create(ctx, "/memories/a.md", "one\ntwo\n"),
		redact.StrReplace(ctx, "/memories/a.md", "two", "aws "+key),
		warn.Insert(ctx, "/memories/a.md", 0, "id "+key),
	} {
		if r.IsError {
			t.Fatal(r.Text)
		}
	}
	vs, err := hs.History(ctx, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, string(v.Op)+": "+v.Policy)
	}
	want := []string{
		"created: ",
		"modified: secrets redacted: aws-access-token on line 2",
		"modified: secrets kept (warn): aws-access-token on line 1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("versions: got %q, want %q", got, want)
	}
	events, err := hs.Audit(ctx, history.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 || events[1].Policy != want[1][len("modified: "):] || events[2].Policy != want[2][len("modified: "):] {
		t.Fatalf("audit events: %+v", events)
	}
	if r := warn.Delete(ctx, "/memories/a.md"); r.IsError { // redact refuses the current content
		t.Fatal(r.Text)
	}
	redacted, err := hs.Redact(ctx, "a.md", vs[2].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(redacted) != 1 || redacted[0].Policy != "" {
		t.Fatalf("Redact returned %+v, want the version without its policy action", redacted)
	}
	after, err := hs.History(ctx, "a.md")
	if err != nil {
		t.Fatal(err)
	}
	if after[2].Redacted == nil || after[2].Policy != "" || after[1].Policy != want[1][len("modified: "):] {
		t.Fatalf("after the redaction: %+v", after)
	}
}
