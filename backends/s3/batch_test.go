package s3_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/s3"
	"github.com/cloudmem/cloudmem/blob"
)

// minio opens a store under a fresh prefix of the test bucket on the MinIO
// that integration/emulators.sh runs. Without one it skips, unless CI or
// CLOUDMEM_INTEGRATION is set: then it fails.
func minio(t *testing.T) blob.Store {
	t.Helper()
	endpoint, bucket := os.Getenv("CLOUDMEM_TEST_S3_ENDPOINT"), os.Getenv("CLOUDMEM_TEST_BUCKET")
	if endpoint == "" || bucket == "" {
		if os.Getenv("CI") != "" || os.Getenv("CLOUDMEM_INTEGRATION") != "" {
			t.Fatal("CLOUDMEM_TEST_S3_ENDPOINT and CLOUDMEM_TEST_BUCKET are not set: no MinIO to test against")
		}
		t.Skip(`no MinIO: eval "$(bash integration/emulators.sh env)" first`)
	}
	prefix := fmt.Sprintf("s3-batch-test/%d", time.Now().UnixNano())
	s, err := s3.Open(t.Context(), bucket, prefix, &s3.Options{Endpoint: endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := blob.DeleteTree(context.Background(), s, "d"); err != nil && !errors.Is(err, blob.ErrNotExist) {
			t.Error(err)
		}
	})
	return s
}

// DeleteKeys deletes 1,005 keys (two DeleteObjects requests) of which five
// do not exist, and leaves the key it was not given.
func TestDeleteKeysMinIO(t *testing.T) {
	s := minio(t)
	if _, ok := s.(blob.BatchDeleter); !ok {
		t.Fatal("the S3 store is no blob.BatchDeleter")
	}
	var keys []string
	for i := range 1005 {
		keys = append(keys, fmt.Sprintf("d/k%04d", i))
	}
	ctx := t.Context()
	sem := make(chan error, 16)
	for i, k := range append(slices.Clone(keys[:1000]), "d/keep") {
		if i >= 16 {
			if err := <-sem; err != nil {
				t.Fatal(err)
			}
		}
		go func() { _, err := s.Put(ctx, k, []byte(k), blob.Cond{}); sem <- err }()
	}
	for range 16 {
		if err := <-sem; err != nil {
			t.Fatal(err)
		}
	}
	if err := blob.DeleteKeys(ctx, s, keys); err != nil {
		t.Fatal(err)
	}
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Key != "d/keep" {
		t.Errorf("left %d keys (%v), want only d/keep", len(infos), infos[:min(len(infos), 3)])
	}
}
