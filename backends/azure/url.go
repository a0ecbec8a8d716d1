package azure

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
	paramAccount  = "account"
	paramEndpoint = "endpoint"
	paramPrefix   = "prefix" // storeurl's shared parameter, applied natively
)

// openURL opens azblob://CONTAINER/PREFIX?account=NAME&endpoint=URL.
func openURL(ctx context.Context, u *url.URL) (blob.Store, error) {
	containerName, prefix, opts, err := parseURL(u)
	if err != nil {
		return nil, err
	}
	return Open(ctx, containerName, prefix, opts)
}

// parseURL splits u into Open's arguments. The prefix is the URL path
// followed by the prefix parameter, when present.
func parseURL(u *url.URL) (containerName, prefix string, opts *Options, err error) {
	if err := storeurl.CheckParams(u, paramAccount, paramEndpoint); err != nil {
		return "", "", nil, err
	}
	if u.User != nil {
		return "", "", nil, fmt.Errorf("azure: a store URL carries no credentials: set %s, or use DefaultAzureCredential (managed identity, workload identity, Azure CLI)", ConnectionStringEnv)
	}
	if u.Opaque != "" || u.Host == "" {
		return "", "", nil, errors.New("azure: the URL names no container: want azblob://CONTAINER[/PREFIX]")
	}
	if u.Port() != "" {
		return "", "", nil, fmt.Errorf("azure: container %q has a port: use endpoint= for a server's address", u.Hostname())
	}
	query := u.Query() // CheckParams has parsed it
	for _, name := range []string{paramAccount, paramEndpoint} {
		if n := len(query[name]); n > 1 {
			return "", "", nil, fmt.Errorf("azure: parameter %s given %d times", name, n)
		}
	}
	opts = &Options{Account: query.Get(paramAccount), Endpoint: query.Get(paramEndpoint), Timeout: storeurl.Timeout(u)}
	prefix = strings.Trim(u.Path, "/")
	if p := strings.Trim(query.Get(paramPrefix), "/"); p != "" {
		prefix = strings.Trim(prefix+"/"+p, "/")
	}
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return "", "", nil, fmt.Errorf("azure: prefix %q: %w", prefix, err)
		}
	}
	return u.Host, prefix, opts, nil
}
