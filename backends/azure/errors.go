package azure

import (
	"errors"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/cloudmem/cloudmem/blob"
)

// classify returns the blob sentinel an SDK error means, or nil. A missing
// container (ContainerNotFound) is not ErrNotExist: it is a configuration
// error, not a missing key.
func classify(err error) error {
	switch {
	case bloberror.HasCode(err, bloberror.BlobNotFound):
		return blob.ErrNotExist
	case bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet):
		return blob.ErrPrecondition
	}
	return nil
}

// mapErr wraps an SDK error for key, adding the blob sentinel it means.
// The SDK error stays reachable with errors.As (*azcore.ResponseError), and
// context errors with errors.Is.
func mapErr(key string, err error) error {
	return newError(key, classify(err), err)
}

// preconditionErr reports a failed condition on key, whatever code the
// service gave it.
func preconditionErr(key string, err error) error {
	return newError(key, blob.ErrPrecondition, err)
}

func newError(key string, sentinel, err error) error {
	var resp *azcore.ResponseError
	if errors.As(err, &resp) {
		return &responseError{key: key, sentinel: sentinel, err: err, resp: resp}
	}
	if sentinel != nil {
		return fmt.Errorf("azure: %q: %w: %w", key, sentinel, err)
	}
	return fmt.Errorf("azure: %q: %w", key, err)
}

// responseError is an error answer of the service. Its message is one line
// (the SDK's spans the whole response body) and names the request's path,
// never its query, where a SAS token would be.
type responseError struct {
	key      string
	sentinel error // nil, blob.ErrNotExist or blob.ErrPrecondition
	err      error // the SDK's error, holding resp
	resp     *azcore.ResponseError
}

func (e *responseError) Error() string {
	method := ""
	if r := e.resp.RawResponse; r != nil && r.Request != nil {
		method = r.Request.Method + " "
	}
	code := e.resp.ErrorCode
	if code == "" {
		code = "(no error code)"
	}
	answer := fmt.Sprintf("%s%d %s", method, e.resp.StatusCode, code)
	if e.sentinel != nil {
		return fmt.Sprintf("azure: %q: %v (%s)", e.key, e.sentinel, answer)
	}
	return fmt.Sprintf("azure: %q: %s", e.key, answer)
}

func (e *responseError) Unwrap() []error {
	if e.sentinel == nil {
		return []error{e.err}
	}
	return []error{e.sentinel, e.err}
}
