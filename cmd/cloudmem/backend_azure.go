//go:build !no_azure

package main

import (
	"errors"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	_ "github.com/cloudmem/cloudmem/backends/azure" // azblob://
)

// An Azure response error with a known code is its first line and the
// hint for the code.
func init() {
	apiErrorDescribers = append(apiErrorDescribers, func(err error) (string, bool) {
		re, ok := errors.AsType[*azcore.ResponseError](err)
		if !ok {
			return "", false
		}
		hint := apiHints[re.ErrorCode]
		if hint == "" {
			return "", false
		}
		return firstLine(err.Error()) + " (" + hint + ")", true
	})
}
