package file_test

import (
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

// suiteSkips are the behaviours a file system cannot offer.
var suiteSkips = blobtest.Options{Skip: map[string]string{
	"KeyAndTreeCoexist": `a file system cannot hold a file "a" and a directory "a"; TestKeyTreeConflict checks the error instead`,
}}

func open(t *testing.T, dir string) blob.Store {
	t.Helper()
	s, err := file.Open(t.Context(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSuite(t *testing.T) {
	blobtest.RunWith(t, func(t *testing.T) blob.Store { return open(t, t.TempDir()) }, suiteSkips)
}
