//go:build !no_s3

package main

import (
	"errors"

	"github.com/aws/smithy-go"

	_ "github.com/cloudmem/cloudmem/backends/s3" // s3://
)

// An S3 API error is its code and message, and the hint for the code.
func init() {
	apiErrorDescribers = append(apiErrorDescribers, func(err error) (string, bool) {
		api, ok := errors.AsType[smithy.APIError](err)
		if !ok {
			return "", false
		}
		msg := api.ErrorCode() // an answer without a body (HEAD) has its status as the message too
		if m := api.ErrorMessage(); m != "" && m != msg {
			msg += ": " + m
		}
		if hint := apiHints[api.ErrorCode()]; hint != "" {
			msg += " (" + hint + ")"
		}
		return msg, true
	})
}
