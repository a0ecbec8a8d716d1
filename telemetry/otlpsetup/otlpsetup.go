// Package otlpsetup configures OpenTelemetry for a cloudmem program: an SDK
// tracer and meter provider that export over OTLP, set as the global
// providers, configured from the standard OTEL_* environment variables.
// Libraries (package telemetry and everything below it) depend on the
// OpenTelemetry API only; a program that wants the SDK imports this package.
//
// # When it configures anything
//
// Setup does nothing, and leaves the global providers as they are (no-ops
// unless the program set them), unless OTEL_EXPORTER_OTLP_ENDPOINT is set,
// so that a program run without that variable never dials a collector. It
// also does nothing when OTEL_SDK_DISABLED is "true". A signal whose
// OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER is "none" is left out.
//
// # Environment
//
// OTEL_EXPORTER_OTLP_PROTOCOL chooses the transport: "http/protobuf" (the
// default, as the OpenTelemetry specification recommends) or "grpc";
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL and OTEL_EXPORTER_OTLP_METRICS_PROTOCOL
// override it per signal. Any other value is an error. The exporters read
// the rest themselves: OTEL_EXPORTER_OTLP_ENDPOINT and its per-signal forms,
// _HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE and _INSECURE. The SDK
// reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the resource),
// OTEL_BSP_* (the span batcher) and OTEL_METRIC_EXPORT_INTERVAL (how often
// metrics are pushed). Spans are exported in batches, off the command's
// path.
//
// # What storage SDKs record
//
// The installed providers give the Google Cloud client libraries (scope
// cloud.google.com/go and below) no-op tracers and meters: their spans
// carry the bucket, the object's name (a memory path) and error texts,
// which package telemetry never exports. Other programs' and libraries'
// scopes are served as usual.
package otlpsetup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Protocols, the values of OTEL_EXPORTER_OTLP_PROTOCOL this package accepts.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
)

// ErrProtocol means an OTEL_EXPORTER_OTLP_*PROTOCOL variable names a
// protocol other than ProtocolGRPC and ProtocolHTTP.
var ErrProtocol = errors.New("otlpsetup: unsupported OTLP protocol")

// Options configures Setup. The zero value is valid.
type Options struct {
	// ServiceName is the service.name resource attribute when
	// OTEL_SERVICE_NAME does not set one. Empty means "cloudmem".
	ServiceName string
}

// Result is what Setup configured.
type Result struct {
	// Enabled reports whether Setup installed providers. When false,
	// nothing was changed and Shutdown does nothing.
	Enabled bool
	// TracesProtocol and MetricsProtocol are the protocols of the
	// exporters installed, or "" for a signal left out.
	TracesProtocol, MetricsProtocol string

	shutdown []func(context.Context) error
}

// Shutdown flushes what the providers hold and stops them. It waits at most
// until ctx is done; call it once, before the program exits, with a
// deadline (a few seconds). It is safe on a zero Result.
func (r *Result) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range r.shutdown {
		errs = append(errs, f(ctx))
	}
	r.shutdown = nil
	return errors.Join(errs...)
}

// Setup installs OTLP-exporting tracer and meter providers as the global
// ones (otel.SetTracerProvider, otel.SetMeterProvider) and the W3C trace
// context and baggage propagators, when the environment asks for it (see
// the package documentation). Creating an exporter does not connect: a
// collector that is down costs failed exports, reported to the
// OpenTelemetry error handler, never a failed command. On error nothing is
// installed.
func Setup(ctx context.Context, opts Options) (*Result, error) {
	res := &Result{}
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" || strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return res, nil
	}
	name := opts.ServiceName
	if name == "" {
		name = "cloudmem"
	}
	// The environment's OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	// over the default name.
	rsc, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName(name)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("otlpsetup: resource: %w", err)
	}
	var tp *sdktrace.TracerProvider
	var mp *sdkmetric.MeterProvider
	if !disabled("OTEL_TRACES_EXPORTER") {
		proto, err := protocol("TRACES")
		if err != nil {
			return nil, err
		}
		exp, err := traceExporter(ctx, proto)
		if err != nil {
			return nil, fmt.Errorf("otlpsetup: trace exporter (%s): %w", proto, err)
		}
		tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(rsc))
		res.TracesProtocol = proto
	}
	if !disabled("OTEL_METRICS_EXPORTER") {
		proto, err := protocol("METRICS")
		if err == nil {
			var exp sdkmetric.Exporter
			exp, err = metricExporter(ctx, proto)
			if err == nil {
				mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(rsc))
				res.MetricsProtocol = proto
			} else {
				err = fmt.Errorf("otlpsetup: metric exporter (%s): %w", proto, err)
			}
		}
		if err != nil {
			if tp != nil {
				_ = tp.Shutdown(ctx)
			}
			return nil, err
		}
	}
	if tp != nil {
		otel.SetTracerProvider(quietTracers{inner: tp})
		res.shutdown = append(res.shutdown, tp.Shutdown)
	}
	if mp != nil {
		otel.SetMeterProvider(quietMeters{inner: mp})
		res.shutdown = append(res.shutdown, mp.Shutdown)
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	res.Enabled = tp != nil || mp != nil
	return res, nil
}

// disabled reports whether the OTEL_*_EXPORTER variable env says "none".
func disabled(env string) bool { return strings.EqualFold(strings.TrimSpace(os.Getenv(env)), "none") }

// protocol returns the OTLP protocol of a signal ("TRACES" or "METRICS").
func protocol(signal string) (string, error) {
	p := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if p == "" {
		p = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch p = strings.TrimSpace(p); p {
	case "":
		return ProtocolHTTP, nil
	case ProtocolGRPC, ProtocolHTTP:
		return p, nil
	}
	return "", fmt.Errorf("%w %q for %s (use %q or %q)", ErrProtocol, p, strings.ToLower(signal), ProtocolGRPC, ProtocolHTTP)
}

func traceExporter(ctx context.Context, proto string) (sdktrace.SpanExporter, error) {
	if proto == ProtocolGRPC {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}

func metricExporter(ctx context.Context, proto string) (sdkmetric.Exporter, error) {
	if proto == ProtocolGRPC {
		return otlpmetricgrpc.New(ctx)
	}
	return otlpmetrichttp.New(ctx)
}
