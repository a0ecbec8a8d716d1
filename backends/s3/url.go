package s3

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

func init() {
	storeurl.Register(Scheme, storeurl.Backend{Open: openURL, NativePrefix: true})
}

// URL parameters of this backend (see the package documentation).
const (
	paramRegion    = "region"
	paramEndpoint  = "endpoint"
	paramPathStyle = "path_style"
	paramPrefix    = "prefix" // storeurl's shared parameter, applied natively
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
	if err := storeurl.CheckParams(u, paramRegion, paramEndpoint, paramPathStyle); err != nil {
		return "", "", nil, err
	}
	if u.User != nil {
		return "", "", nil, errors.New("s3: a store URL carries no credentials: the AWS SDK's chain provides them (e.g. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	}
	if u.Opaque != "" || u.Host == "" {
		return "", "", nil, errors.New("s3: the URL names no bucket: want s3://BUCKET[/PREFIX]")
	}
	if u.Port() != "" {
		return "", "", nil, fmt.Errorf("s3: bucket %q has a port: use endpoint= for a server's address", u.Host)
	}
	query := u.Query() // CheckParams has parsed it
	opts = &Options{Region: query.Get(paramRegion), Endpoint: query.Get(paramEndpoint), Timeout: storeurl.Timeout(u)}
	for _, name := range []string{paramRegion, paramEndpoint, paramPathStyle} {
		if len(query[name]) > 1 {
			return "", "", nil, fmt.Errorf("s3: parameter %s given %d times", name, len(query[name]))
		}
	}
	if v, ok := query[paramPathStyle]; ok {
		switch v[0] {
		case "true", "1":
			opts.PathStyle = true
		case "false", "0":
		default:
			return "", "", nil, fmt.Errorf("s3: path_style=%s: want true, false, 1 or 0", v[0])
		}
	}
	prefix = strings.Trim(u.Path, "/")
	if p := strings.Trim(query.Get(paramPrefix), "/"); p != "" {
		prefix = strings.Trim(prefix+"/"+p, "/")
	}
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return "", "", nil, fmt.Errorf("s3: prefix %q: %w", prefix, err)
		}
	}
	return u.Host, prefix, opts, nil
}
