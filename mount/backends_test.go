package mount_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mount/mounttest"
)

// The read-only and concurrency checks over the in-memory store and the
// local directory (integration/mount_test.go runs them on every server).
func TestMountsMem(t *testing.T) {
	mounttest.Run(t, func(t *testing.T) blob.Store { return mem.New(nil) })
}

func TestMountsFile(t *testing.T) {
	mounttest.Run(t, func(t *testing.T) blob.Store {
		s, err := file.Open(t.Context(), t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { blob.Close(s) })
		return s
	})
}
