package main

import (
	"slices"
	"testing"

	"github.com/cloudmem/cloudmem/storeurl"
)

// needSchemes skips t when the binary under test was built without the
// backend of one of schemes (a lean build, docs/build.md), whose scheme or
// error wording the test needs. A build with every backend, as CI's, runs
// every such test.
func needSchemes(t *testing.T, schemes ...string) {
	t.Helper()
	tags := map[string]string{"s3": "no_s3", "gs": "no_gcs", "azblob": "no_azure", "redis": "no_redis"}
	for _, s := range schemes {
		if !slices.Contains(storeurl.Schemes(), s) {
			t.Skipf("built without the %s backend (-tags %s): this test needs it", s, tags[s])
		}
	}
}
