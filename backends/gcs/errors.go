package gcs

import (
	"errors"
	"fmt"
	"net/http"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/cloudmem/cloudmem/blob"
)

// classify returns the blob sentinel that a client library error means,
// or nil. The library marks every 404 of an object call, a missing bucket
// included, with storage.ErrObjectNotExist; a failed condition is a 412.
func classify(err error) error {
	switch {
	case errors.Is(err, storage.ErrObjectNotExist):
		return blob.ErrNotExist
	case isPrecondition(err):
		return blob.ErrPrecondition
	}
	return nil
}

// isPrecondition reports whether err is the server's 412 Precondition
// Failed.
func isPrecondition(err error) bool {
	var apiErr *googleapi.Error
	return errors.As(err, &apiErr) && apiErr.Code == http.StatusPreconditionFailed
}

// mapErr wraps a client library error for key, adding the blob sentinel it
// means. The library's error stays reachable with errors.As (for
// *googleapi.Error) and errors.Is (for storage.ErrObjectNotExist and
// context errors). Its errors name no credentials.
func mapErr(key string, err error) error {
	if sentinel := classify(err); sentinel != nil {
		return fmt.Errorf("gcs: %q: %w: %w", key, sentinel, err)
	}
	return fmt.Errorf("gcs: %q: %w", key, err)
}

// wrapErr is mapErr, except that it returns nil for a nil err.
func wrapErr(key string, err error) error {
	if err == nil {
		return nil
	}
	return mapErr(key, err)
}
