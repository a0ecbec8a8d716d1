package s3

import (
	"context"
	"fmt"
	"net/url"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "s3"

func init() {
	storeurl.Register(Scheme, storeurl.Backend{Open: openURL, NativePrefix: true})
}

// URL parameters of this backend (see the package documentation).
const (
	paramRegion    = "region"
	paramEndpoint  = "endpoint"
	paramPathStyle = "path_style"
)

// openURL opens s3://BUCKET/PREFIX?region=R&endpoint=URL&path_style=true.
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
		Backend: "s3", Noun: "bucket", Params: []string{paramRegion, paramEndpoint, paramPathStyle},
		Credentials: "the AWS SDK's chain provides them (e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
	})
	if err != nil {
		return "", "", nil, err
	}
	opts = &Options{Region: b.Params.Get(paramRegion), Endpoint: b.Params.Get(paramEndpoint), Timeout: b.Timeout}
	if v, ok := b.Params[paramPathStyle]; ok {
		switch v[0] {
		case "true", "1":
			opts.PathStyle = true
		case "false", "0":
		default:
			return "", "", nil, fmt.Errorf("s3: path_style=%s: want true, false, 1 or 0", v[0])
		}
	}
	return b.Name, b.Prefix, opts, nil
}
