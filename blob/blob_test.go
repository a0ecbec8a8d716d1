package blob_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

// plain hides every capability of the store it embeds, so that blob.Rename
// and blob.DeleteTree take their portable fallbacks.
type plain struct{ blob.Store }

func TestMem(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return mem.New(nil) })
}

func TestPlainWrapper(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return plain{mem.New(nil)} })
}

func TestReadOnly(t *testing.T) {
	blobtest.RunReadOnly(t, func(t *testing.T, objects map[string][]byte) blob.Store {
		s := mem.New(nil)
		for k, data := range objects {
			if _, err := s.Put(t.Context(), k, data, blob.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		return blob.ReadOnly(s)
	})
}
