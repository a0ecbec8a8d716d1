package s3

// These tests need no server. The store's behaviour against a real one
// (blobtest, the memory suites, SDK retries) is tested in
// integration/s3_test.go, against MinIO.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		url, bucket, prefix string
		opts                Options
	}{
		{"s3://b", "b", "", Options{}},
		{"s3://b/", "b", "", Options{}},
		{"s3://b/agents/one/", "b", "agents/one", Options{}},
		{"s3://b/agents?prefix=one", "b", "agents/one", Options{}},
		{"s3://b?prefix=/one/", "b", "one", Options{}},
		{"s3://b/a%20b?region=eu-west-1", "b", "a b", Options{Region: "eu-west-1"}},
		{"s3://cloudmem-test/agent1?endpoint=http://127.0.0.1:9000&path_style=true&region=us-east-1",
			"cloudmem-test", "agent1", Options{Region: "us-east-1", Endpoint: "http://127.0.0.1:9000", PathStyle: true}},
		{"s3://b?path_style=1", "b", "", Options{PathStyle: true}},
		{"s3://b?path_style=false", "b", "", Options{}},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		bucket, prefix, opts, err := parseURL(u)
		if err != nil {
			t.Errorf("parseURL(%s): %v", tt.url, err)
			continue
		}
		if bucket != tt.bucket || prefix != tt.prefix || *opts != tt.opts {
			t.Errorf("parseURL(%s) = %q, %q, %+v; want %q, %q, %+v", tt.url, bucket, prefix, *opts, tt.bucket, tt.prefix, tt.opts)
		}
	}
}

func TestParseURLErrors(t *testing.T) {
	tests := []struct{ url, want string }{
		{"s3://b?regoin=x", `unknown URL parameter "regoin"`},
		{"s3://b?region=a&region=b", "region given 2 times"},
		{"s3://b?path_style=+1", `s3: path_style=" 1": want true, false, 1 or 0`}, // + decodes as a space
		{"s3://b?path_style=yes", "path_style=\"yes\": want true, false, 1 or 0"},
		{"s3://key:hunter2@b", "carries no credentials"},
		{"s3:///prefix", "names no bucket"},
		{"s3:b", "names no bucket"},
		{"s3://b:9000", "use endpoint="},
		{"s3://b/a/../c", `prefix "a/../c"`},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = parseURL(u)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseURL(%s) error = %v, want one containing %q", tt.url, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseURL(%s) error %q shows the password", tt.url, err)
		}
	}
}

// TestParseURLReservedPrefix checks that a bucket URL whose path, joined with
// prefix=, lies in the reserved namespace is refused before anything opens.
func TestParseURLReservedPrefix(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"s3://b/.cloudmem/history", `s3: prefix ".cloudmem/history": the segment .cloudmem is reserved for cloudmem's bookkeeping`},
		{"s3://b/team/.cloudmem-locks?prefix=x", `s3: prefix "team/.cloudmem-locks/x": the segment .cloudmem-locks is reserved for cloudmem's bookkeeping`},
		{"s3://b/team?prefix=.cloudmem-locks", `storeurl: prefix=".cloudmem-locks": the segment .cloudmem-locks is reserved for cloudmem's bookkeeping`},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = parseURL(u)
		if err == nil || err.Error() != tt.want || !errors.Is(err, storeurl.ErrReservedPrefix) {
			t.Errorf("parseURL(%s) error = %v, want %q (ErrReservedPrefix)", tt.url, err, tt.want)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	client := awss3.New(awss3.Options{Region: "us-east-1"})
	tests := []struct {
		name, bucket, prefix string
		opts                 *Options
		want                 string
	}{
		{"no bucket", "", "", &Options{Client: client}, "invalid bucket name"},
		{"slash in bucket", "a/b", "", &Options{Client: client}, "invalid bucket name"},
		{"bad prefix", "b", "a//b", &Options{Client: client}, "prefix"},
		{"client and region", "b", "", &Options{Client: client, Region: "x"}, "Options.Client is set"},
		{"bad endpoint", "b", "", &Options{Endpoint: "127.0.0.1:9000"}, "want http://host"},
		{"endpoint with password", "b", "", &Options{Endpoint: "http://key:secret@host"}, `endpoint "http://host"`},
	}
	for _, tt := range tests {
		_, err := Open(ctx, tt.bucket, tt.prefix, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Open error = %v, want one containing %q", tt.name, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: Open error %q shows the password", tt.name, err)
		}
	}
}

func TestOpenRegion(t *testing.T) {
	// An empty chain: no region anywhere.
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	ctx := context.Background()
	if _, err := Open(ctx, "b", "", nil); err == nil || !strings.Contains(err.Error(), "no region") {
		t.Fatalf("Open without a region: error = %v, want one saying there is no region", err)
	}
	s, err := Open(ctx, "b", "", &Options{Endpoint: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := blob.Unwrap(s).(*store).client.Options().Region; got != defaultEndpointRegion {
		t.Fatalf("region with an endpoint and no chain = %q, want %q", got, defaultEndpointRegion)
	}
	t.Setenv("AWS_REGION", "eu-central-1")
	if s, err = Open(ctx, "b", "", &Options{Endpoint: "http://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	if got := blob.Unwrap(s).(*store).client.Options().Region; got != "eu-central-1" {
		t.Fatalf("region from AWS_REGION = %q, want eu-central-1", got)
	}
}

// TestNoRequest checks the calls that must fail before any request: invalid
// keys, keys too long with the prefix, cancelled contexts. The client points
// at a port where nothing listens, so a request would fail differently.
func TestNoRequest(t *testing.T) {
	client := awss3.New(awss3.Options{Region: "us-east-1", BaseEndpoint: strPtr("http://127.0.0.1:1"), UsePathStyle: true})
	s, err := Open(context.Background(), "b", "/agents/one/", &Options{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	long := strings.Repeat("k", blob.MaxKeyLen-len("agents/one/")+1) // valid, but over S3's limit with the prefix
	for _, key := range []string{"", "a//b", "../a", long} {
		if _, err := s.Put(ctx, key, nil, blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%.20q): error = %v, want ErrInvalidKey", key, err)
		}
		if err := blob.DeleteTree(ctx, s, key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("DeleteTree(%.20q): error = %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := s.Put(ctx, long[1:], nil, blob.Cond{IfAbsent: true, IfVersion: "v"}); err == nil || errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Put with both conditions: error = %v, want a Cond error", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := s.Get(cancelled, "k", blob.MaxObjectBytes); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a cancelled context: error = %v", err)
	}
	if err := s.Delete(cancelled, "k", blob.Cond{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete with a cancelled context: error = %v", err)
	}
	for _, err := range s.List(cancelled, "") {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("List with a cancelled context: error = %v", err)
		}
	}
}

func strPtr(s string) *string { return &s }

func TestVersions(t *testing.T) {
	// S3 sends an ETag in quotes; a version spells it without them.
	const quoted, etag, id = `"9a0364b9e99bb480dd25e1f0284c8555"`, "9a0364b9e99bb480dd25e1f0284c8555", "00112233445566778899aabbccddeeff"
	v := joinVersion(quoted, id)
	if v != etag+"#"+id {
		t.Fatalf("joinVersion = %q, want %q", v, etag+"#"+id)
	}
	if gotTag, gotID := splitVersion(v); gotTag != etag || gotID != id {
		t.Fatalf("splitVersion(%q) = %q, %q", v, gotTag, gotID)
	}
	if got := quoteETag(etag); got != quoted {
		t.Fatalf("quoteETag = %q, want %q", got, quoted)
	}
	// Objects written by other programs have no write id, or a foreign one.
	for _, foreign := range []string{"", "short", "00112233445566778899AABBCCDDEEFF", id + "0"} {
		if got := joinVersion(quoted, foreign); got != etag {
			t.Errorf("joinVersion(quoted, %q) = %q, want the bare ETag %q", foreign, got, etag)
		}
	}
	if gotTag, gotID := splitVersion(etag + "#x"); gotTag != etag+"#x" || gotID != "" {
		t.Errorf("splitVersion of a version without a write id = %q, %q", gotTag, gotID)
	}
	// The quoted versions of earlier releases name the same object.
	legacy := quoted + "#" + id
	if gotTag, gotID := splitVersion(legacy); gotTag != etag || gotID != id {
		t.Errorf("splitVersion(%q) = %q, %q", legacy, gotTag, gotID)
	}

	other := joinVersion(quoted, "ffeeddccbbaa99887766554433221100")
	matches := []struct {
		want, cur string
		ok        bool
	}{
		{v, v, true},
		{v, other, false},      // same bytes, another write
		{etag, v, true},        // a List version names the content
		{etag, etag, true},     // an object without a write id
		{v, etag, false},       // rewritten by another program
		{"other", v, false},    // other content
		{legacy, v, true},      // a version of an earlier release
		{quoted, v, true},      // a List version of an earlier release
		{legacy, other, false}, // ... of another write
	}
	for _, m := range matches {
		if got := versionMatches(m.want, m.cur); got != m.ok {
			t.Errorf("versionMatches(%q, %q) = %v, want %v", m.want, m.cur, got, m.ok)
		}
	}
}

func TestMetaValue(t *testing.T) {
	for _, meta := range []map[string]string{{"cloudmem-write": "x"}, {"Cloudmem-Write": "x"}} {
		if got := metaValue(meta, metaWriteID); got != "x" {
			t.Errorf("metaValue(%v) = %q", meta, got)
		}
	}
	if got := metaValue(nil, metaWriteID); got != "" {
		t.Errorf("metaValue(nil) = %q", got)
	}
}

// apiError builds an SDK error as the client returns it: an operation
// error around a ResponseError around the API error.
func apiError(status int, code string) error {
	var inner error = &smithy.GenericAPIError{Code: code, Message: "message"}
	if code == "" {
		inner = errors.New("no body")
	}
	return &smithy.OperationError{
		ServiceID:     "S3",
		OperationName: "Op",
		Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: inner},
			RequestID:     "req",
		},
	}
}

func TestMapErr(t *testing.T) {
	tests := []struct {
		err      error
		sentinel error // nil: neither ErrNotExist nor ErrPrecondition
		conflict bool
	}{
		{apiError(404, "NoSuchKey"), blob.ErrNotExist, false},
		{apiError(404, "NotFound"), blob.ErrNotExist, false},
		{apiError(404, ""), blob.ErrNotExist, false},
		{apiError(404, "NoSuchBucket"), nil, false},
		{apiError(412, "PreconditionFailed"), blob.ErrPrecondition, false},
		{apiError(412, ""), blob.ErrPrecondition, false},
		{apiError(409, "ConditionalRequestConflict"), nil, true},
		{apiError(403, "AccessDenied"), nil, false},
		{apiError(500, "InternalError"), nil, false},
		{context.Canceled, nil, false},
	}
	for _, tt := range tests {
		err := mapErr("k", tt.err)
		if !strings.HasPrefix(err.Error(), `s3: "k": `) {
			t.Errorf("mapErr(%v) = %q, want it to name the key", tt.err, err)
		}
		for _, s := range []error{blob.ErrNotExist, blob.ErrPrecondition} {
			if got, want := errors.Is(err, s), s == tt.sentinel; got != want {
				t.Errorf("mapErr(%v): errors.Is(err, %v) = %v, want %v", tt.err, s, got, want)
			}
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("mapErr(%v) lost the SDK error", tt.err)
		}
		var respErr *awshttp.ResponseError
		if tt.err != context.Canceled && !errors.As(err, &respErr) {
			t.Errorf("mapErr(%v): errors.As(*awshttp.ResponseError) is false", tt.err)
		}
		if got := isConflict(tt.err); got != tt.conflict {
			t.Errorf("isConflict(%v) = %v", tt.err, got)
		}
	}
	var apiErr smithy.APIError
	if err := mapErr("k", apiError(403, "AccessDenied")); !errors.As(err, &apiErr) || apiErr.ErrorCode() != "AccessDenied" {
		t.Errorf("mapErr kept no smithy.APIError: %v", err)
	}
}
