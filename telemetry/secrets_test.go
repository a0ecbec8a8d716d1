package telemetry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/policy"
	"github.com/cloudmem/cloudmem/telemetry"
)

// Secrets a policy finds are counted by rule and mode and marked on the
// command span; the secret itself reaches no span, event or metric.
func TestSecrets(t *testing.T) {
	const key = "AKIAZ3MSJV4WWNKWW5FG"
	r := newRig(t, telemetry.Options{Backend: "mem", RecordPaths: true})
	for _, mode := range []policy.Mode{policy.Warn, policy.Redact, policy.Reject} {
		h := r.handler(t, mem.New(nil), memory.Options{Policy: &policy.Policy{Secrets: mode}})
		h.Execute(context.Background(), []byte(`{"command":"create","path":"/memories/a.md","file_text":"`+key+`\nxoxb-123456789012-1234567890123-abcdefghijABCDEFGHIJklmn"}`))
	}
	got := points(r.metrics(t)[telemetry.MetricSecrets])
	want := []string{
		"cloudmem.policy.mode=redact cloudmem.policy.rule=aws-access-token cloudmem.storage.backend=mem: 1",
		"cloudmem.policy.mode=redact cloudmem.policy.rule=slack-bot-token cloudmem.storage.backend=mem: 1",
		"cloudmem.policy.mode=reject cloudmem.policy.rule=aws-access-token cloudmem.storage.backend=mem: 1",
		"cloudmem.policy.mode=reject cloudmem.policy.rule=slack-bot-token cloudmem.storage.backend=mem: 1",
		"cloudmem.policy.mode=warn cloudmem.policy.rule=aws-access-token cloudmem.storage.backend=mem: 1",
		"cloudmem.policy.mode=warn cloudmem.policy.rule=slack-bot-token cloudmem.storage.backend=mem: 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant\n%s", telemetry.MetricSecrets, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var events []string
	for _, s := range r.spans.Ended() {
		for _, e := range s.Events() {
			if e.Name == telemetry.EventSecret {
				events = append(events, s.Name()+": "+attrs(e.Attributes))
			}
		}
	}
	wantEvents := []string{
		"create_memory: cloudmem.policy.mode=warn cloudmem.policy.rule=aws-access-token",
		"create_memory: cloudmem.policy.mode=warn cloudmem.policy.rule=slack-bot-token",
		"create_memory: cloudmem.policy.mode=redact cloudmem.policy.rule=aws-access-token",
		"create_memory: cloudmem.policy.mode=redact cloudmem.policy.rule=slack-bot-token",
		"create_memory: cloudmem.policy.mode=reject cloudmem.policy.rule=aws-access-token",
		"create_memory: cloudmem.policy.mode=reject cloudmem.policy.rule=slack-bot-token",
	}
	if strings.Join(events, "\n") != strings.Join(wantEvents, "\n") {
		t.Errorf("span events:\n%s\nwant\n%s", strings.Join(events, "\n"), strings.Join(wantEvents, "\n"))
	}
	if out := r.exported(t); strings.Contains(out, key) || strings.Contains(out, "xoxb-") {
		t.Errorf("a secret appears in the exported telemetry:\n%s", out)
	}
}
