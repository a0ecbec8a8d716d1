package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/policy"
)

// MetricSecrets counts the secrets a write policy found (docs/spec.md
// "Write policies"), by cloudmem.policy.rule (the gitleaks rule) and
// cloudmem.policy.mode (warn, redact or reject). Neither the secret nor
// the path is recorded.
const MetricSecrets = "cloudmem.memory.secrets"

const (
	keyPolicyRule = attribute.Key("cloudmem.policy.rule")
	keyPolicyMode = attribute.Key("cloudmem.policy.mode")
)

// EventSecret is the event a command span gets for each secret found, with
// the rule and the mode.
const EventSecret = "cloudmem.memory.secret"

var _ memory.SecretObserver = (*observer)(nil)

// SecretFound counts one finding and adds an event to the command's span.
// The rule names come from a fixed rule set, so the series stay few.
func (o *observer) SecretFound(ctx context.Context, rule string, mode policy.Mode) {
	kvs := []attribute.KeyValue{keyPolicyRule.String(rule), keyPolicyMode.String(mode.String())}
	o.secrets.Add(ctx, 1, metric.WithAttributes(append(kvs, o.backend)...))
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(EventSecret, trace.WithAttributes(kvs...))
	}
}
