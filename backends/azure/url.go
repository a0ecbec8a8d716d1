package azure

import (
	"context"
	"net/url"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "azblob"

func init() {
	storeurl.Register(Scheme, storeurl.Backend{Open: openURL, NativePrefix: true})
}

// URL parameters of this backend (see the package documentation).
const (
	paramAccount  = "account"
	paramEndpoint = "endpoint"
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
	b, err := storeurl.ParseBucket(u, storeurl.BucketSyntax{
		Backend: "azure", Noun: "container", Params: []string{paramAccount, paramEndpoint},
		Credentials: "set " + ConnectionStringEnv + ", or use DefaultAzureCredential (managed identity, workload identity, Azure CLI)",
	})
	if err != nil {
		return "", "", nil, err
	}
	return b.Name, b.Prefix, &Options{Account: b.Params.Get(paramAccount), Endpoint: b.Params.Get(paramEndpoint), Timeout: b.Timeout}, nil
}
