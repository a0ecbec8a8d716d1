package azure

import (
	"context"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "azblob"

// URL parameters of this backend (see the package documentation).
const (
	paramAccount  = "account"
	paramEndpoint = "endpoint"
)

// backend opens azblob://CONTAINER/PREFIX?account=NAME&endpoint=URL;
// storeurl parses the container and the prefix, which is native because
// it is escaped with the keys into blob names (names.go).
var backend = storeurl.Backend{Name: "azure", Params: []string{paramAccount, paramEndpoint}, NativePrefix: true, Open: openURL, Place: place,
	Bucket: &storeurl.BucketSyntax{Noun: "container",
		Credentials: "set " + ConnectionStringEnv + ", or use DefaultAzureCredential (managed identity, workload identity, Azure CLI)"}}

func init() { storeurl.Register(Scheme, backend) }

func openURL(ctx context.Context, loc *storeurl.Location) (blob.Store, error) {
	return Open(ctx, loc.Bucket, loc.Prefix, options(loc))
}

// place is the container in its account on its server (storeurl.Place), as
// the URL names them: an account or endpoint that the connection string of
// the environment gives is the same for every URL, and so left out.
func place(loc *storeurl.Location) (storeurl.Place, error) {
	return storeurl.BucketPlace(loc, strings.ToLower(loc.Params.Get(paramAccount)), storeurl.Endpoint(loc.Params.Get(paramEndpoint))), nil
}

// options reads the backend's parameters.
func options(loc *storeurl.Location) *Options {
	return &Options{Account: loc.Params.Get(paramAccount), Endpoint: loc.Params.Get(paramEndpoint), Timeout: loc.Timeout}
}
