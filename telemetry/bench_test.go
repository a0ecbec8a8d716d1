package telemetry_test

import (
	"context"
	"log/slog"
	"os"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/blob"
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

// BenchmarkCommand measures a str_replace and a view (3 storage calls) on
// the in-memory store, where the instrumentation's share is largest, and on
// a local directory: without instrumentation (bare), instrumented with the
// default no-op providers (noop), and with the SDK, a batching span
// exporter and a periodic metric reader, both discarding what they export
// (sdk). With CLOUDMEM_TEST_REDIS_ADDR set it runs on Redis too.
func BenchmarkCommand(b *testing.B) {
	for _, backend := range []string{"mem", "file", "redis"} {
		for _, mode := range []string{"bare", "noop", "sdk"} {
			b.Run(backend+"/"+mode, func(b *testing.B) { benchCommand(b, backend, mode) })
		}
	}
}

func benchCommand(b *testing.B, backend, mode string) {
	ctx := context.Background()
	var store blob.Store
	switch backend {
	case "mem":
		store = mem.New(nil)
	case "file":
		var err error
		if store, err = file.Open(ctx, b.TempDir(), nil); err != nil {
			b.Fatal(err)
		}
	case "redis":
		addr := os.Getenv("CLOUDMEM_TEST_REDIS_ADDR")
		if addr == "" {
			b.Skip("no Redis server: set CLOUDMEM_TEST_REDIS_ADDR")
		}
		client := goredis.NewClient(&goredis.Options{Addr: addr})
		b.Cleanup(func() { _ = client.Close() })
		prefix := "telemetry-bench-" + mode
		var err error
		if store, err = redis.Open(ctx, client, &redis.Options{Prefix: prefix}); err != nil {
			b.Fatal(err)
		}
		_ = store.Delete(ctx, "notes.md", blob.Cond{}) // left by an interrupted run
		b.Cleanup(func() { _ = store.Delete(ctx, "notes.md", blob.Cond{}) })
	}
	opts := memory.Options{Logger: slog.New(slog.DiscardHandler)}
	var topts telemetry.Options
	switch mode {
	case "bare":
	case "sdk":
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(discardMetrics{})))
		b.Cleanup(func() { _ = tp.Shutdown(ctx); _ = mp.Shutdown(ctx) })
		topts = telemetry.Options{TracerProvider: tp, MeterProvider: mp}
		fallthrough
	case "noop":
		topts.Backend = backend
		in, err := telemetry.New(topts)
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
}
