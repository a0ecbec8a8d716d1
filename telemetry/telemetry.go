package telemetry

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every tracer and meter this
// package creates.
const ScopeName = "github.com/cloudmem/cloudmem/telemetry"

// Options configures an Instrumentation. The zero value records through the
// global providers, with no store identifier and no paths.
type Options struct {
	// TracerProvider creates the tracer. Nil means otel.GetTracerProvider()
	// at each span, so that a provider the program installs later is used;
	// it is a no-op until the program installs one. A provider that makes
	// no spans (the default global one, trace/noop) is detected and costs
	// no span at all.
	TracerProvider trace.TracerProvider
	// MeterProvider creates the instruments. Nil means
	// otel.GetMeterProvider(), a no-op unless the program installed one.
	MeterProvider metric.MeterProvider
	// Backend names the kind of storage, recorded as cloudmem.storage.backend
	// on every span and metric: the storeurl scheme ("s3", "gcs", "azure",
	// "redis", "file", "mem"). Empty means "unknown". It must not carry a
	// host, bucket or credential.
	Backend string
	// StoreID, when not empty, is recorded as gen_ai.memory.store.id on
	// command spans: a name the program chooses for the memory store (for
	// example a tenant or agent id), never a bucket name or URL.
	StoreID string
	// RecordPaths records the memory paths of each command (the path as the
	// model wrote it, e.g. /memories/notes.md) on its span as
	// gen_ai.memory.record.id and cloudmem.memory.new_path. Paths are the
	// user's data, so this is off by default; storage keys are never
	// recorded, with or without it.
	RecordPaths bool
}

// Instrumentation records spans and metrics for the memory commands of the
// handlers it observes (Observer) and for the storage calls of the stores it
// wraps (Store). Create one per store (or per backend and store id) and
// share it: it is safe for concurrent use. Its instruments, and every
// attribute set it records, are built once by New, so that recording
// allocates little even when the providers are no-ops.
type Instrumentation struct {
	tracing     *tracing
	recordPaths bool

	cmdDuration     metric.Float64Histogram
	storageDuration metric.Float64Histogram
	conflicts       metric.Int64Counter
	retries         metric.Int64Counter
	gaveUp          metric.Int64Counter
	storageErrors   metric.Int64Counter
	bytesRead       metric.Int64Counter
	bytesWritten    metric.Int64Counter
	secrets         metric.Int64Counter // secrets.go
	backend         attribute.KeyValue

	// Prebuilt options, by the indexes of attrs.go.
	cmdStart [len(commands)][2][]trace.SpanStartOption // [command][overwrite]
	cmdEnd   [outcomes][]attribute.KeyValue            // span attributes at the end, but retries
	// The metric options are one-element slices, passed with ..., so that
	// recording does not allocate a slice per call.
	cmdRecord     [len(commands)][2][outcomes][]metric.RecordOption
	cmdCount      [len(commands)][]metric.AddOption // conflicts, retries, gave_up
	storageStart  [numOps][numConds][]trace.SpanStartOption
	storageEnd    [numResults][]attribute.KeyValue // plus error.type for a failure
	storageRecord [numOps][numResults][]metric.RecordOption
	storageFailed [numOps][len(storageErrors)][]metric.AddOption
	storageBytes  [numOps][]metric.AddOption
}

// New returns an Instrumentation configured by opts. It fails only when the
// meter provider refuses to create an instrument.
func New(opts Options) (*Instrumentation, error) {
	mp := opts.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	backend := opts.Backend
	if backend == "" {
		backend = "unknown"
	}
	in := &Instrumentation{tracing: newTracing(opts.TracerProvider), recordPaths: opts.RecordPaths}
	if err := in.instruments(mp.Meter(ScopeName)); err != nil {
		return nil, err
	}
	in.backend = keyBackend.String(backend)
	in.prebuild(in.backend, opts.StoreID)
	return in, nil
}

// instruments creates the instruments.
func (in *Instrumentation) instruments(m metric.Meter) error {
	var errs []error
	hist := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(durationBuckets...))
		errs = append(errs, err)
		return h
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	in.cmdDuration = hist(MetricCommandDuration, "Duration of memory commands.")
	in.storageDuration = hist(MetricStorageDuration, "Duration of storage calls.")
	in.conflicts = counter(MetricConflicts, "{conflict}", "Writes that lost a race with another writer.")
	in.retries = counter(MetricRetries, "{retry}", "Commands re-read and re-applied after a conflict.")
	in.gaveUp = counter(MetricGaveUp, "{command}", "Commands that gave up after their last retry.")
	in.storageErrors = counter(MetricStorageErrors, "{error}", "Storage calls that failed, by cause.")
	in.bytesRead = counter(MetricBytesRead, "By", "Bytes read from storage.")
	in.bytesWritten = counter(MetricBytesWritten, "By", "Bytes written to storage.")
	in.secrets = counter(MetricSecrets, "{secret}", "Secrets a write policy found, by rule and mode.")
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: creating instruments: %w", err)
	}
	return nil
}

// prebuild builds every span option and attribute set the Instrumentation
// records.
func (in *Instrumentation) prebuild(backend attribute.KeyValue, storeID string) {
	record := func(kvs ...attribute.KeyValue) []metric.RecordOption {
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
	}
	add := func(kvs ...attribute.KeyValue) []metric.AddOption {
		return []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
	}
	for c, name := range commands {
		cmd := keyCommand.String(name)
		in.cmdCount[c] = add(cmd, backend)
		for ow := range 2 {
			op := keyOperation.String(operationName(name, ow == 1))
			attrs := []attribute.KeyValue{op, cmd, backend}
			if storeID != "" {
				attrs = append(attrs, keyStoreID.String(storeID))
			}
			// INTERNAL: the handler runs in the caller's process; its
			// storage calls are the CLIENT spans.
			in.cmdStart[c][ow] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
			for o := range outcomes {
				kvs := []attribute.KeyValue{op, cmd, backend, keyResult.String("ok")}
				if o > 0 {
					kvs = append(kvs[:3], keyResult.String("error"), keyErrorType.String(errorKinds[o-1].name))
				}
				in.cmdRecord[c][ow][o] = record(kvs...)
			}
		}
	}
	in.cmdEnd[0] = []attribute.KeyValue{keyResult.String("ok")}
	for o := 1; o < outcomes; o++ {
		in.cmdEnd[o] = []attribute.KeyValue{keyResult.String("error"), keyErrorType.String(errorKinds[o-1].name)}
	}
	for op, name := range opNames {
		opAttr := keyStorageOp.String(name)
		for cond, cname := range condNames {
			attrs := []attribute.KeyValue{backend, opAttr}
			if cond != condAbsent {
				attrs = append(attrs, keyCondition.String(cname))
			}
			in.storageStart[op][cond] = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}
		}
		for r, rname := range resultNames {
			in.storageRecord[op][r] = record(backend, opAttr, keyStorageRes.String(rname))
		}
		for f, e := range storageErrors {
			in.storageFailed[op][f] = add(backend, opAttr, keyErrorType.String(e.name))
		}
		in.storageBytes[op] = add(backend, opAttr)
	}
	for r, rname := range resultNames {
		in.storageEnd[r] = []attribute.KeyValue{keyStorageRes.String(rname)}
	}
}

// durationBuckets are the histogram boundaries, in seconds: commands and
// storage calls range from a few microseconds (in-process stores) to
// seconds (a slow cloud request with retries). The SDK's default
// boundaries start at 5 (seconds, here), which would put every call in the
// first bucket.
var durationBuckets = []float64{0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
