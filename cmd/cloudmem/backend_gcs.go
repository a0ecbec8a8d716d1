//go:build !no_gcs

package main

import (
	"errors"

	"cloud.google.com/go/storage"

	_ "github.com/cloudmem/cloudmem/backends/gcs" // gs://
)

// A missing GCS bucket is said as such, with what to check (the client's
// own text quotes the object and its HTTP status).
func init() {
	apiErrorDescribers = append(apiErrorDescribers, func(err error) (string, bool) {
		if errors.Is(err, storage.ErrBucketNotExist) {
			return "the bucket does not exist (check the bucket name in the store URL)", true
		}
		return "", false
	})
}
