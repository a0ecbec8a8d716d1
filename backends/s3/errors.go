package s3

import (
	"errors"
	"fmt"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"

	"github.com/cloudmem/cloudmem/blob"
)

// classify returns the blob sentinel that an SDK error means, or nil.
// A missing bucket is not ErrNotExist, except for HEAD requests, whose 404
// answers carry no error code to tell it from a missing key.
func classify(err error) error {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return blob.ErrNotExist
		case "PreconditionFailed":
			return blob.ErrPrecondition
		case "NoSuchBucket":
			return nil
		}
	}
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		switch respErr.HTTPStatusCode() {
		case http.StatusNotFound:
			return blob.ErrNotExist
		case http.StatusPreconditionFailed:
			return blob.ErrPrecondition
		}
	}
	return nil
}

// isConflict reports whether err is S3's 409 ConditionalRequestConflict: a
// conditional request raced another one and may be retried.
func isConflict(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == "ConditionalRequestConflict"
}

// mapErr wraps an SDK error for key, adding the blob sentinel it means.
// The SDK error stays reachable with errors.As; context errors with
// errors.Is. SDK errors name no credentials.
func mapErr(key string, err error) error {
	if sentinel := classify(err); sentinel != nil {
		return fmt.Errorf("s3: %q: %w: %w", key, sentinel, err)
	}
	return fmt.Errorf("s3: %q: %w", key, err)
}
