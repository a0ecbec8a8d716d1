package gcs

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"

	"cloud.google.com/go/storage"
	"google.golang.org/api/option"

	"github.com/cloudmem/cloudmem/internal/redact"
)

// newClient creates the client for a store opened without Options.Client.
// It reads objects through the JSON API, like every other call (the
// library's default is the XML API for reads), so that one API serves the
// store and any JSON API emulator serves reads.
func newClient(ctx context.Context, opts *Options) (*storage.Client, error) {
	// No telemetry of the client's own (its HTTP transport's spans carry the
	// URL, so the bucket and the object's name): package telemetry traces
	// the store's calls without them.
	copts := []option.ClientOption{storage.WithJSONReads(), option.WithTelemetryDisabled()}
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
	// A refused connection fails at once instead of being retried until the
	// call's timeout (30 s by default): nothing listens there, and the
	// person or the model learns it now (issue 26 item 10).
	client.SetRetry(storage.WithErrorFunc(transient))
	return client, nil
}

// transient reports whether a failed request may be sent again: the
// library's rule, less a refused connection.
func transient(err error) bool {
	return !errors.Is(err, syscall.ECONNREFUSED) && storage.ShouldRetry(err)
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
