package storeurl

import (
	"context"
	"errors"
	"net/url"

	"github.com/cloudmem/cloudmem/blob"
)

// encryptParams are the shared query parameters that configure encryption.
// Open removes them from the URL before the backend sees it, and calls
// encrypt when at least one of them is present.
var encryptParams = []string{"encrypt", "age_identity_file", "age_recipients"}

// encrypt is the crypt hook: Open calls it, when the URL holds any of
// encryptParams, with s (the backend's store, already scoped by prefix) and
// params (the encryption parameters present, each given exactly once). It
// validates params and returns s wrapped so that every object is encrypted;
// Open then applies readonly on top. Its errors are returned by Open as they
// are, so they start with "storeurl: ".
//
// This version is a placeholder until package crypt exists; the crypt
// package's author replaces this file (and only this file) with one that
// calls crypt.
func encrypt(ctx context.Context, s blob.Store, params url.Values) (blob.Store, error) {
	return nil, errors.New("storeurl: encrypt=age: the crypt package is not wired yet")
}
