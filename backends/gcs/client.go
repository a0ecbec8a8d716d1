package gcs

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/cloudmem/cloudmem/internal/redact"
)

// Options configures Open. The zero value uses Application Default
// Credentials against Google Cloud Storage, or the emulator that
// STORAGE_EMULATOR_HOST names.
type Options struct {
	// Client is the client to use, as configured by the caller
	// (credentials, endpoint, retry policy, transport); it must come from
	// storage.NewClient (the JSON API; gRPC clients are not supported) and
	// Endpoint must then be empty. The store never closes it. Nil means
	// Open creates a client, which the store's Close closes.
	Client *storage.Client

	// Endpoint is the base URL of a server speaking the GCS JSON API, such
	// as an emulator (http://127.0.0.1:4443) or a private endpoint. When
	// the URL has no path, /storage/v1/ is added. An http:// endpoint is
	// sent no credentials. Empty means the STORAGE_EMULATOR_HOST server
	// when that variable is set, and Google's endpoint otherwise.
	Endpoint string

	// Timeout is the deadline of each storage call (see blob.WithTimeout):
	// a call the server has not answered by then fails with
	// blob.ErrTimeout. Zero means blob.DefaultTimeout (30s). The URL
	// parameter timeout= sets it.
	Timeout time.Duration
}

// newClient creates the client for a store opened without Options.Client.
// It reads objects through the JSON API, like every other call (the
// library's default is the XML API for reads), so that one API serves the
// store and any JSON API emulator serves reads.
func newClient(ctx context.Context, opts *Options) (*storage.Client, error) {
	copts := []option.ClientOption{storage.WithJSONReads()}
	if opts.Endpoint != "" {
		u, err := parseEndpoint(opts.Endpoint)
		if err != nil {
			return nil, err
		}
		copts = append(copts, option.WithEndpoint(u.String()))
		if u.Scheme == "http" {
			copts = append(copts, option.WithoutAuthentication())
		}
	}
	client, err := storage.NewClient(ctx, copts...)
	if err != nil {
		return nil, fmt.Errorf("gcs: creating the client: %w", err)
	}
	return client, nil
}

// parseEndpoint checks an endpoint URL and adds the JSON API's path when it
// has none.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("gcs: endpoint %q: want http[s]://host[:port][/path]", redact.URL(raw))
	}
	switch {
	case u.Path == "" || u.Path == "/":
		u.Path = "/storage/v1/"
	case !strings.HasSuffix(u.Path, "/"):
		u.Path += "/"
	}
	return u, nil
}
