package telemetry_test

import (
	"context"
	"errors"
	"slices"
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

// closeStore records Close and reports a mount table.
type closeStore struct {
	blob.Store
	closed *bool
}

func (c closeStore) Close() error { *c.closed = true; return nil }

func (c closeStore) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen, Mounts: []blob.MountPoint{{Name: "team", ReadOnly: true}}}
}

// The wrapper forwards what the suites cannot see: the key budget, the
// read-only flag, the mount table and Close.
func TestStoreForwards(t *testing.T) {
	in, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := blob.Prefix(mem.New(nil), "tenant")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := blob.KeyBytes(in.Store(scoped)), blob.KeyBytes(scoped); got != want || want != blob.MaxKeyLen-len("tenant/") {
		t.Errorf("KeyBytes = %d, want %d", got, want)
	}
	if !blob.IsReadOnly(in.Store(blob.ReadOnly(mem.New(nil)))) || blob.IsReadOnly(in.Store(mem.New(nil))) {
		t.Error("IsReadOnly is not forwarded")
	}
	var closed bool
	s := in.Store(closeStore{Store: mem.New(nil), closed: &closed})
	if err := blob.Close(s); err != nil || !closed {
		t.Errorf("Close: %v, closed %v", err, closed)
	}
	if got := blob.Mounts(s); len(got) != 1 || got[0] != (blob.MountPoint{Name: "team", ReadOnly: true}) {
		t.Errorf("Mounts = %v", got)
	}
	if got := blob.Mounts(in.Store(mem.New(nil))); got != nil {
		t.Errorf("Mounts of a plain store = %v, want nil", got)
	}
	var locked []string
	unlock, err := blob.Lock(context.Background(), in.Store(lockStore{Store: mem.New(nil), locked: &locked}), "a.md")
	if err != nil || !slices.Equal(locked, []string{"a.md"}) {
		t.Errorf("Lock: %v, inner store locked %q, want [a.md]", err, locked)
	}
	unlock()
	if _, err := in.Store(coreOnly{mem.New(nil)}).(blob.Locker).Lock(context.Background(), "a.md"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Lock over a store without locks: %v, want ErrUnsupported", err)
	}
}

// lockStore records the keys it is asked to lock.
type lockStore struct {
	blob.Store
	locked *[]string
}

func (l lockStore) Lock(_ context.Context, key string) (func(), error) {
	*l.locked = append(*l.locked, key)
	return func() {}, nil
}
