package gcs

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
	paramEndpoint = "endpoint"
	paramPrefix   = "prefix" // storeurl's shared parameter, applied natively
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
	if err := storeurl.CheckParams(u, paramEndpoint); err != nil {
		return "", "", nil, err
	}
	if u.User != nil {
		return "", "", nil, errors.New("gcs: a store URL carries no credentials: Application Default Credentials provide them " +
			"(e.g. GOOGLE_APPLICATION_CREDENTIALS)")
	}
	if u.Opaque != "" || u.Host == "" {
		return "", "", nil, errors.New("gcs: the URL names no bucket: want gs://BUCKET[/PREFIX]")
	}
	if u.Port() != "" {
		return "", "", nil, fmt.Errorf("gcs: bucket %q has a port: use endpoint= for a server's address", u.Host)
	}
	query := u.Query() // CheckParams has parsed it
	if n := len(query[paramEndpoint]); n > 1 {
		return "", "", nil, fmt.Errorf("gcs: parameter %s given %d times", paramEndpoint, n)
	}
	opts = &Options{Endpoint: query.Get(paramEndpoint), Timeout: storeurl.Timeout(u)}
	prefix = strings.Trim(u.Path, "/")
	if p := strings.Trim(query.Get(paramPrefix), "/"); p != "" {
		prefix = strings.Trim(prefix+"/"+p, "/")
	}
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return "", "", nil, fmt.Errorf("gcs: prefix %q: %w", prefix, err)
		}
	}
	return u.Host, prefix, opts, nil
}
