package telemetry_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/telemetry"
)

// hider is a store whose listing, it says, hides keys under objects.
type hider struct{ blob.Store }

func (hider) ListHidesUnderObjects() bool { return true }

// The instrumented store passes blob.ListHider on, both ways.
func TestListHiderForwarded(t *testing.T) {
	in, err := telemetry.New(telemetry.Options{Backend: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	if !blob.ListHidesUnderObjects(in.Store(hider{mem.New(nil)})) {
		t.Error("over a store that hides: ListHidesUnderObjects = false")
	}
	if blob.ListHidesUnderObjects(in.Store(mem.New(nil))) {
		t.Error("over mem: ListHidesUnderObjects = true")
	}
}
