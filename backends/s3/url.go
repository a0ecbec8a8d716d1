package s3

import (
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "s3"

// URL parameters of this backend (see the package documentation).
const (
	paramRegion    = "region"
	paramEndpoint  = "endpoint"
	paramPathStyle = "path_style"
)

// backend opens s3://BUCKET/PREFIX?region=R&endpoint=URL&path_style=true;
// storeurl parses the bucket and the prefix, which the store passes to its
// listings.
var backend = storeurl.Backend{Name: "s3", Params: []string{paramRegion, paramEndpoint, paramPathStyle}, NativePrefix: true,
	Bucket: &storeurl.BucketSyntax{Noun: "bucket", Credentials: "the AWS SDK's chain provides them (e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"},
	// The bucket on its server; region= and path_style= pick no other
	// bucket (a bucket's name is unique on its server).
	Place: func(loc *storeurl.Location) (storeurl.Place, error) {
		return storeurl.BucketPlace(loc, storeurl.Endpoint(loc.Params.Get(paramEndpoint))), nil
	},
	Open: func(ctx context.Context, loc *storeurl.Location) (blob.Store, error) {
		opts, err := options(loc)
		if err != nil {
			return nil, err
		}
		return Open(ctx, loc.Bucket, loc.Prefix, opts)
	}}

func init() { storeurl.Register(Scheme, backend) }

// options reads the backend's parameters.
func options(loc *storeurl.Location) (*Options, error) {
	opts := &Options{Region: loc.Params.Get(paramRegion), Endpoint: loc.Params.Get(paramEndpoint), Timeout: loc.Timeout}
	if v, ok := loc.Params[paramPathStyle]; ok {
		switch v[0] {
		case "true", "1":
			opts.PathStyle = true
		case "false", "0":
		default:
			return nil, fmt.Errorf("s3: path_style=%q: want true, false, 1 or 0", v[0])
		}
	}
	return opts, nil
}
