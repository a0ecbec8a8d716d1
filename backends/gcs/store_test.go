package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/cloudmem/cloudmem/blob"
)

// The store's behaviour against a server is tested in package integration
// (blobtest, the handler suites, retries), against fake-gcs-server. The
// tests here need no server: nothing they do reaches the network.

// unreachable is an endpoint nothing listens on: a test that sent a request
// there would fail with a connection error, not the error it expects.
const unreachable = "http://127.0.0.1:1"

func openOffline(t *testing.T) blob.Store {
	t.Helper()
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	s, err := Open(t.Context(), "bucket", "/agents/alice/", &Options{Endpoint: unreachable})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.(io.Closer).Close() })
	return s
}

func TestOpenErrors(t *testing.T) {
	ctx := t.Context()
	client, err := storage.NewClient(ctx, option.WithoutAuthentication(), option.WithEndpoint(unreachable+"/storage/v1/"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	tests := []struct {
		bucket, prefix string
		opts           *Options
		want           string
	}{
		{"", "", nil, `gcs: invalid bucket name ""`},
		{"a/b", "", nil, `gcs: invalid bucket name "a/b"`},
		{"b", "a//b", nil, "gcs: prefix: blob: invalid key: empty segment"},
		{"b", "", &Options{Client: client, Endpoint: unreachable}, "gcs: Options.Client is set: leave Endpoint empty and configure the client instead"},
		{"b", "", &Options{Endpoint: "127.0.0.1:4443"}, `gcs: endpoint "127.0.0.1:4443": want http[s]://host[:port][/path]`},
	}
	for _, tc := range tests {
		_, err := Open(ctx, tc.bucket, tc.prefix, tc.opts)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Open(%q, %q, %+v) error = %v\nwant %s", tc.bucket, tc.prefix, tc.opts, err, tc.want)
		}
	}
}

// TestNoRequest checks the calls that fail before any request: bad
// versions, keys too long with the prefix, and everything after Close.
func TestNoRequest(t *testing.T) {
	s := openOffline(t)
	ctx := t.Context()
	for _, v := range []string{"abc", "0", "-5", "007", "+7", " 7", "1.0", "99999999999999999999"} {
		_, err := s.Put(ctx, "k", []byte("x"), blob.Cond{IfVersion: v})
		want := fmt.Sprintf(`gcs: "k": blob: precondition failed: %q is no version of this store`, v)
		if err == nil || err.Error() != want || !errors.Is(err, blob.ErrPrecondition) {
			t.Errorf("Put(IfVersion %q) error = %v\nwant %s", v, err, want)
		}
		err = s.Delete(ctx, "k", blob.Cond{IfVersion: v})
		if err == nil || err.Error() != want || !errors.Is(err, blob.ErrPrecondition) {
			t.Errorf("Delete(IfVersion %q) error = %v\nwant %s", v, err, want)
		}
	}

	// "agents/alice/" takes 13 of the 1,024 bytes of an object name.
	long := strings.Repeat("x", blob.MaxKeyLen-12)
	_, err := s.Put(ctx, long, nil, blob.Cond{})
	if want := "blob: invalid key: 1025 bytes with the store prefix, over 1024"; err == nil || err.Error() != want {
		t.Errorf("Put of a key too long with the prefix: error = %v, want %s", err, want)
	}

	if err := s.(io.Closer).Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.(io.Closer).Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, _, getErr := s.Get(ctx, "k", blob.MaxObjectBytes)
	_, statErr := s.Stat(ctx, "k")
	_, putErr := s.Put(ctx, "k", nil, blob.Cond{})
	_, listErr := blob.ListAll(ctx, s, "")
	for name, err := range map[string]error{
		"Get": getErr, "Stat": statErr, "Put": putErr, "Delete": s.Delete(ctx, "k", blob.Cond{}), "List": listErr,
	} {
		if err == nil || err.Error() != "gcs: store is closed: use of closed network connection" || !errors.Is(err, net.ErrClosed) {
			t.Errorf("%s after Close: error = %v, want one wrapping net.ErrClosed", name, err)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for v, want := range map[string]int64{"1": 1, "1795993052256859": 1795993052256859, "9223372036854775807": 1<<63 - 1} {
		if gen, ok := parseVersion(v); !ok || gen != want || formatVersion(gen) != v {
			t.Errorf("parseVersion(%q) = %d, %t; want %d, true", v, gen, ok, want)
		}
	}
	for _, v := range []string{"", "0", "-1", "01", "+1", "1e3", "0x10", "9223372036854775808", "1 "} {
		if gen, ok := parseVersion(v); ok {
			t.Errorf("parseVersion(%q) = %d, true; want false", v, gen)
		}
	}
}

// TestMapErr checks that errors carry the blob sentinel, keep the client
// library's error reachable, and read plainly.
func TestMapErr(t *testing.T) {
	precondition := &googleapi.Error{Code: http.StatusPreconditionFailed, Message: "Precondition failed"}
	notFound := fmt.Errorf("%w: %w", storage.ErrObjectNotExist, &googleapi.Error{Code: http.StatusNotFound, Message: "No such object"})
	unavailable := &googleapi.Error{Code: http.StatusServiceUnavailable, Message: "Backend Error"}
	tests := []struct {
		err      error
		sentinel error // nil: none
		text     string
	}{
		{precondition, blob.ErrPrecondition, `gcs: "k": blob: precondition failed: googleapi: Error 412: Precondition failed`},
		{notFound, blob.ErrNotExist, `gcs: "k": blob: object does not exist: storage: object doesn't exist: googleapi: Error 404: No such object`},
		{unavailable, nil, `gcs: "k": googleapi: Error 503: Backend Error`},
		{context.Canceled, nil, `gcs: "k": context canceled`},
	}
	for _, tc := range tests {
		err := mapErr("k", tc.err)
		if err.Error() != tc.text {
			t.Errorf("mapErr(%v) = %q, want %q", tc.err, err, tc.text)
		}
		if !errors.Is(err, tc.err) {
			t.Errorf("mapErr(%v) does not wrap it", tc.err)
		}
		for _, s := range []error{blob.ErrNotExist, blob.ErrPrecondition} {
			if got := errors.Is(err, s); got != (s == tc.sentinel) {
				t.Errorf("errors.Is(mapErr(%v), %v) = %t", tc.err, s, got)
			}
		}
		var apiErr *googleapi.Error
		if errors.As(tc.err, &apiErr) {
			var got *googleapi.Error
			if !errors.As(err, &got) || got != apiErr {
				t.Errorf("mapErr(%v): the *googleapi.Error is not reachable with errors.As", tc.err)
			}
		}
	}
	if wrapErr("k", nil) != nil {
		t.Error("wrapErr(nil) is not nil")
	}
}
