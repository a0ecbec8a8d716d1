package telemetry_test

import (
	"context"
	"log/slog"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/telemetry"
)

// discardMetrics is a metric exporter that drops what it is given.
type discardMetrics struct{}

func (discardMetrics) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}
func (discardMetrics) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}
func (discardMetrics) Export(context.Context, *metricdata.ResourceMetrics) error { return nil }
func (discardMetrics) ForceFlush(context.Context) error                          { return nil }
func (discardMetrics) Shutdown(context.Context) error                            { return nil }

// BenchmarkCommand measures a view and a str_replace on the in-memory store
// (where the instrumentation's share is largest): without instrumentation
// (bare), instrumented with the default no-op providers (noop), and with
// the SDK, a batching span exporter and a periodic metric reader, both
// discarding what they export (sdk).
func BenchmarkCommand(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"bare", "noop", "sdk"} {
		b.Run(mode, func(b *testing.B) {
			store := mem.New(nil)
			opts := memory.Options{Logger: slog.New(slog.DiscardHandler)}
			switch mode {
			case "noop":
				in, err := telemetry.New(telemetry.Options{Backend: "mem"})
				if err != nil {
					b.Fatal(err)
				}
				store, opts.Observer = in.Store(store), in.Observer()
			case "sdk":
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(discardMetrics{})))
				b.Cleanup(func() { _ = tp.Shutdown(ctx); _ = mp.Shutdown(ctx) })
				in, err := telemetry.New(telemetry.Options{TracerProvider: tp, MeterProvider: mp, Backend: "mem"})
				if err != nil {
					b.Fatal(err)
				}
				store, opts.Observer = in.Store(store), in.Observer()
			}
			h, err := memory.New(store, opts)
			if err != nil {
				b.Fatal(err)
			}
			if res := h.Create(ctx, "/memories/notes.md", "a\nb\nc\n"); res.IsError {
				b.Fatal(res.Text)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				old, new := "b", "B"
				if i%2 == 1 {
					old, new = new, old
				}
				if res := h.StrReplace(ctx, "/memories/notes.md", old, new); res.IsError {
					b.Fatal(res.Text)
				}
				if res := h.View(ctx, "/memories/notes.md", nil); res.IsError {
					b.Fatal(res.Text)
				}
			}
		})
	}
}
