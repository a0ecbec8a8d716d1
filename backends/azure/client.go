package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
)

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
		client, err := container.NewClientFromConnectionString(conn, containerName, clientOptions())
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
	client, err := container.NewClient(runtime.JoinPaths(service, containerName), cred, clientOptions())
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	return client, nil
}

// clientOptions are the SDK's defaults, except that a refused connection
// fails at once instead of being retried for seconds (issue 26 item 10):
// nothing listens there.
func clientOptions() *container.ClientOptions {
	o := &container.ClientOptions{}
	o.Retry.ShouldRetry = func(resp *http.Response, err error) bool {
		if err != nil {
			return !errors.Is(err, syscall.ECONNREFUSED)
		}
		return slices.Contains(retriedStatus, resp.StatusCode)
	}
	return o
}

// transient reports whether a request that failed this way may be sent
// again: the SDK's rule as clientOptions sets it.
func transient(err error) bool {
	var resp *azcore.ResponseError
	if errors.As(err, &resp) {
		return slices.Contains(retriedStatus, resp.StatusCode)
	}
	return !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// retriedStatus are the statuses the SDK retries by default
// (policy.RetryOptions.StatusCodes).
var retriedStatus = []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

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
