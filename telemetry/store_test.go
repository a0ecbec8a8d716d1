package telemetry_test

import (
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/telemetry"
)

// recordingStore wraps a new mem store with an Instrumentation that records
// through the SDK, so that the suites run through the recording path (not
// only the no-op one).
func recordingStore(t *testing.T) blob.Store {
	t.Helper()
	in, err := telemetry.New(telemetry.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder())),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		Backend:        "mem",
	})
	if err != nil {
		t.Fatal(err)
	}
	return in.Store(mem.New(nil))
}

// The wrapper is a Store like any other: the conformance suite passes
// through it, capabilities included.
func TestStoreConformance(t *testing.T) {
	blobtest.Run(t, recordingStore)
}

// A wrapper over a store without capabilities still passes: Rename and
// DeleteTree report ErrUnsupported and the fallbacks run through it.
func TestStoreConformanceWithoutCapabilities(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		in, err := telemetry.New(telemetry.Options{Backend: "mem"})
		if err != nil {
			t.Fatal(err)
		}
		return in.Store(coreOnly{mem.New(nil)})
	})
}

// The handler's whole contract holds through the wrapper.
func TestHandlerConformance(t *testing.T) {
	memorytest.Run(t, recordingStore)
}

// coreOnly hides every capability of the store it embeds.
type coreOnly struct{ blob.Store }
