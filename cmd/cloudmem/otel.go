package main

// OpenTelemetry for every command (issue 17). When OTEL_EXPORTER_OTLP_ENDPOINT
// is set, the program exports a span per memory command and per storage
// call, and the metrics of package telemetry, over OTLP (grpc or
// http/protobuf, as OTEL_EXPORTER_OTLP_PROTOCOL says; see package otlpsetup
// for every variable read). Without it nothing is configured and no store
// is wrapped, so a plain run pays nothing.
//
// The hooks are three calls: startTelemetry once per run (runContext),
// instrumentStore on every store opened (openURL), and instrumentOptions
// on the options of every handler (handler, and the MCP server's
// per-tenant handlers).

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
	"github.com/cloudmem/cloudmem/telemetry"
	"github.com/cloudmem/cloudmem/telemetry/otlpsetup"
)

// otelShutdownTimeout bounds the final flush of spans and metrics when the
// program ends, so that a collector that is down delays exit at most this.
const otelShutdownTimeout = 5 * time.Second

// otelEnabled reports whether the environment asks for OTLP export.
func (a *app) otelEnabled() bool {
	return a.getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" && !strings.EqualFold(a.getenv("OTEL_SDK_DISABLED"), "true")
}

// startTelemetry installs the OTLP exporters when the environment asks for
// them and returns the function that flushes and stops them, to be called
// once when the run ends. A bad configuration (an unknown protocol) is
// reported on stderr and the run goes on without telemetry: observability
// must not stop a command.
func (a *app) startTelemetry(ctx context.Context) (stop func()) {
	if !a.otelEnabled() {
		return func() {}
	}
	res, err := otlpsetup.Setup(ctx, otlpsetup.Options{ServiceName: "cloudmem"})
	if err != nil {
		fmt.Fprintf(a.stderr, "cloudmem: telemetry is off: %v\n", err)
		return func() {}
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), otelShutdownTimeout)
		defer cancel()
		if err := res.Shutdown(sctx); err != nil && a.verbose {
			fmt.Fprintf(a.stderr, "cloudmem: flushing telemetry: %v\n", err)
		}
	}
}

// instrumentStore returns s wrapped so that its storage calls are traced
// and measured, with the URL's scheme as the backend, when telemetry is on;
// otherwise s itself.
func (a *app) instrumentStore(s blob.Store, rawURL string) blob.Store {
	if !a.otelEnabled() {
		return s
	}
	in, err := telemetry.New(telemetry.Options{Backend: storeurl.Scheme(rawURL)})
	if err != nil {
		return s
	}
	return in.Store(s)
}

// instrumentOptions returns opts with an Observer that traces and measures
// every command, when telemetry is on; otherwise opts as they are. The MCP
// server passes the options of its per-tenant handlers through it too.
func (a *app) instrumentOptions(opts memory.Options) memory.Options {
	if !a.otelEnabled() || opts.Observer != nil {
		return opts
	}
	backend := "mount"
	if len(a.mounts) == 0 {
		backend = storeurl.Scheme(a.storeURL())
	}
	in, err := telemetry.New(telemetry.Options{Backend: backend})
	if err == nil {
		opts.Observer = in.Observer()
	}
	return opts
}
