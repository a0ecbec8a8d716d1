package otlpsetup

import (
	"strings"

	"go.opentelemetry.io/otel/metric"
	metricembedded "go.opentelemetry.io/otel/metric/embedded"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	traceembedded "go.opentelemetry.io/otel/trace/embedded"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// quietScopes are the instrumentation scopes of storage SDKs that record,
// on their own and through the global providers, what package telemetry
// promises never to export: the Google Cloud client libraries name the
// bucket and the object (the memory path) in their spans and errors. The
// providers Setup installs hand them no-op tracers and meters. (The GCS
// backend also turns off its HTTP transport's instrumentation; the AWS,
// Azure and Redis SDKs record nothing unless given providers of their own.)
var quietScopes = []string{"cloud.google.com/go"}

// quiet reports whether the scope name belongs to a quietScopes SDK.
func quiet(name string) bool {
	for _, p := range quietScopes {
		if name == p || strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

// quietTracers is a TracerProvider that gives the quietScopes no-op
// tracers and every other scope the inner provider's. It is safe for
// concurrent use.
type quietTracers struct {
	traceembedded.TracerProvider
	inner trace.TracerProvider
}

func (q quietTracers) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	if quiet(name) {
		return tracenoop.NewTracerProvider().Tracer(name, opts...)
	}
	return q.inner.Tracer(name, opts...)
}

// quietMeters is quietTracers for meters.
type quietMeters struct {
	metricembedded.MeterProvider
	inner metric.MeterProvider
}

func (q quietMeters) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	if quiet(name) {
		return metricnoop.NewMeterProvider().Meter(name, opts...)
	}
	return q.inner.Meter(name, opts...)
}
