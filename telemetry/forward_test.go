package telemetry_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/telemetry"
)

// The instrumented store hands every capability and its Traits on.
func TestForwarding(t *testing.T) {
	in, err := telemetry.New(telemetry.Options{Backend: "mem"})
	if err != nil {
		t.Fatal(err)
	}
	blobtest.Forwarding(t, func(*testing.T) blob.Store { return mem.New(nil) },
		func(_ *testing.T, s blob.Store) blob.Store { return in.Store(s) }, blobtest.ForwardingOptions{})
}
