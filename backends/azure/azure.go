package azure

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/cloudmem/cloudmem/blob"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "azblob"

// ConnectionStringEnv is the environment variable Open reads a connection
// string from when Options has neither Client nor ConnectionString.
const ConnectionStringEnv = "AZURE_STORAGE_CONNECTION_STRING"

// Options configures Open. The zero value uses AZURE_STORAGE_CONNECTION_STRING
// when it is set, and otherwise needs Account or Endpoint.
type Options struct {
	// Client is the container client to use, as configured by the caller
	// (credential, retries, transport). Nil means a client built from the
	// fields below, which must be empty when Client is set.
	Client *container.Client

	// ConnectionString is a storage account connection string (with an
	// AccountKey or a SharedAccessSignature). Empty means the value of
	// AZURE_STORAGE_CONNECTION_STRING; when that is empty too, the store
	// uses DefaultAzureCredential against Endpoint or Account.
	ConnectionString string

	// Account is the storage account name. Empty means the connection
	// string's account, or the one Endpoint names.
	Account string

	// Endpoint is the account's blob service URL, such as
	// https://NAME.blob.core.chinacloudapi.cn or, for Azurite,
	// http://127.0.0.1:10000/devstoreaccount1. Empty means the connection
	// string's, or https://ACCOUNT.blob.core.windows.net.
	Endpoint string

	// Timeout is the deadline of each storage call (see blob.WithTimeout):
	// a call the server has not answered by then fails with
	// blob.ErrTimeout. Zero means blob.DefaultTimeout (30s). The URL
	// parameter timeout= sets it.
	Timeout time.Duration
}

// Open returns a store over the blobs of the container named containerName
// under prefix: store key k is blob prefix+"/"+k (k itself when prefix is
// empty), with the escapes described in the package documentation. prefix
// may have leading and trailing slashes, which are ignored; otherwise it
// must be empty or a valid blob key. When opts.Client is set, containerName
// may be empty (the client's container) or must be the client's container.
// A nil opts means the zero Options.
//
// Open makes no request: a missing container or a credential problem shows
// in the first call. The store is safe for concurrent use.
func Open(ctx context.Context, containerName, prefix string, opts *Options) (blob.Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	prefix = strings.Trim(prefix, "/")
	dir := ""
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("azure: prefix: %w", err)
		}
		dir = escape(prefix) + "/"
	}
	client := opts.Client
	if client != nil {
		if opts.ConnectionString != "" || opts.Account != "" || opts.Endpoint != "" {
			return nil, errors.New("azure: Options.Client is set: leave ConnectionString, Account and Endpoint empty and configure the client instead")
		}
		if name := clientContainer(client); containerName != "" && containerName != name {
			return nil, fmt.Errorf("azure: container %q differs from the client's container %q", containerName, name)
		}
	} else {
		if err := checkContainer(containerName); err != nil {
			return nil, err
		}
		var err error
		if client, err = newClient(containerName, opts); err != nil {
			return nil, err
		}
	}
	return blob.WithTimeout(&store{client: client, dir: dir}, opts.Timeout), nil
}

// clientContainer returns the container name in a container client's URL:
// its last path segment.
func clientContainer(c *container.Client) string {
	u, err := url.Parse(c.URL())
	if err != nil {
		return ""
	}
	return u.Path[strings.LastIndex(u.Path, "/")+1:]
}

// checkContainer rejects container names that would change the meaning of
// the container URL; the service checks the rest of its naming rules.
func checkContainer(name string) error {
	if name == "" || strings.ContainsAny(name, "/\\?#%@ ") || !isASCIIPrintable(name) {
		return fmt.Errorf("azure: invalid container name %q", name)
	}
	return nil
}

// newClient builds a container client from opts: a connection string, or
// DefaultAzureCredential against the account's endpoint.
func newClient(containerName string, opts *Options) (*container.Client, error) {
	conn := opts.ConnectionString
	if conn == "" {
		conn = os.Getenv(ConnectionStringEnv)
	}
	if conn != "" {
		if err := checkConnectionString(conn, opts.Account, opts.Endpoint); err != nil {
			return nil, err
		}
		client, err := container.NewClientFromConnectionString(conn, containerName, nil)
		if err != nil {
			// The SDK's parse errors quote no part of the string.
			return nil, fmt.Errorf("azure: connection string: %w", err)
		}
		return client, nil
	}
	service, err := serviceURL(opts.Account, opts.Endpoint)
	if err != nil {
		return nil, err
	}
	cred, err := azidentity.NewDefaultAzureCredential(nil)
	if err != nil {
		return nil, fmt.Errorf("azure: credentials: %w", err)
	}
	client, err := container.NewClient(runtime.JoinPaths(service, containerName), cred, nil)
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	return client, nil
}

// serviceURL returns the blob service URL for an account and an endpoint,
// either of which may be empty (not both).
func serviceURL(account, endpoint string) (string, error) {
	if account != "" && !validAccount(account) {
		return "", fmt.Errorf("azure: invalid account name %q: want 3 to 24 lower-case letters and digits", account)
	}
	if endpoint == "" {
		if account == "" {
			return "", fmt.Errorf("azure: no account: set account= in the URL, Options.Account or Options.Endpoint, or %s", ConnectionStringEnv)
		}
		return "https://" + account + ".blob.core.windows.net", nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("azure: endpoint: want http(s)://HOST[:PORT][/ACCOUNT]")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(endpoint, "?") {
		// A SAS token or a key would be here: never echo it.
		return "", errors.New("azure: endpoint: a URL with user information or a query is not accepted (credentials come from a connection string or DefaultAzureCredential)")
	}
	if account != "" && !namesAccount(u, account) {
		return "", fmt.Errorf("azure: endpoint %s does not name account %q (in its host name or first path segment)", u.Redacted(), account)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// namesAccount reports whether endpoint u belongs to account: its host's
// first label (NAME.blob.core.windows.net) or its first path segment
// (Azurite's http://127.0.0.1:10000/NAME).
func namesAccount(u *url.URL, account string) bool {
	label, _, _ := strings.Cut(u.Hostname(), ".")
	first, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	return label == account || first == account
}

// validAccount reports whether s is a storage account name.
func validAccount(s string) bool {
	if len(s) < 3 || len(s) > 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func isASCIIPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// checkConnectionString checks that account and endpoint, when set, are the
// connection string's own. Its errors never quote the connection string.
func checkConnectionString(conn, account, endpoint string) error {
	fields := map[string]string{}
	for part := range strings.SplitSeq(strings.TrimRight(conn, ";"), ";") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return errors.New("azure: connection string: want NAME=VALUE pairs separated by ';'")
		}
		fields[strings.TrimSpace(name)] = value
	}
	if account != "" && fields["AccountName"] != account {
		return fmt.Errorf("azure: account %q differs from the connection string's AccountName %q (from %s or Options.ConnectionString)",
			account, fields["AccountName"], ConnectionStringEnv)
	}
	if endpoint != "" && strings.TrimRight(fields["BlobEndpoint"], "/") != strings.TrimRight(endpoint, "/") {
		return fmt.Errorf("azure: endpoint differs from the connection string's BlobEndpoint (from %s or Options.ConnectionString)", ConnectionStringEnv)
	}
	return nil
}
