package gcs

import (
	"context"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "gs"

// paramEndpoint is this backend's URL parameter (see the package
// documentation).
const paramEndpoint = "endpoint"

// backend opens gs://BUCKET/PREFIX?endpoint=URL; storeurl parses the bucket
// and the prefix, which the store passes to its listings.
var backend = storeurl.Backend{Name: "gcs", Params: []string{paramEndpoint}, NativePrefix: true, Open: openURL, Place: place,
	Bucket: &storeurl.BucketSyntax{Noun: "bucket", Credentials: "Application Default Credentials provide them (e.g. GOOGLE_APPLICATION_CREDENTIALS)"}}

func init() { storeurl.Register(Scheme, backend) }

func openURL(ctx context.Context, loc *storeurl.Location) (blob.Store, error) {
	return Open(ctx, loc.Bucket, loc.Prefix, options(loc))
}

// place is the bucket on its server (storeurl.Place).
func place(loc *storeurl.Location) (storeurl.Place, error) {
	return storeurl.BucketPlace(loc, storeurl.Endpoint(loc.Params.Get(paramEndpoint))), nil
}

// options reads the backend's parameters.
func options(loc *storeurl.Location) *Options {
	return &Options{Endpoint: loc.Params.Get(paramEndpoint), Timeout: loc.Timeout}
}
