package gcs

import (
	"context"
	"net/url"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "gs"

func init() {
	storeurl.Register(Scheme, storeurl.Backend{Open: openURL, NativePrefix: true})
}

// URL parameters of this backend (see the package documentation).
const (
	paramEndpoint = "endpoint"
)

// openURL opens gs://BUCKET/PREFIX?endpoint=URL.
func openURL(ctx context.Context, u *url.URL) (blob.Store, error) {
	bucket, prefix, opts, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	return Open(ctx, bucket, prefix, opts)
}

// parseURL splits u into Open's arguments. The prefix is the URL path
// followed by the prefix parameter, when present.
func parseURL(u *url.URL) (bucket, prefix string, opts *Options, err error) {
	b, err := storeurl.ParseBucket(u, storeurl.BucketSyntax{
		Backend: "gcs", Noun: "bucket", Params: []string{paramEndpoint},
		Credentials: "Application Default Credentials provide them (e.g. GOOGLE_APPLICATION_CREDENTIALS)",
	})
	if err != nil {
		return "", "", nil, err
	}
	return b.Name, b.Prefix, &Options{Endpoint: b.Params.Get(paramEndpoint), Timeout: b.Timeout}, nil
}
