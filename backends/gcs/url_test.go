package gcs

import (
	"net/url"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		raw      string
		bucket   string
		prefix   string
		endpoint string
	}{
		{"gs://b", "b", "", ""},
		{"gs://b/", "b", "", ""},
		{"gs://my-bucket/agents/alice", "my-bucket", "agents/alice", ""},
		{"gs://b/agents/alice/?prefix=sub", "b", "agents/alice/sub", ""},
		{"gs://b?prefix=/sub/dir/", "b", "sub/dir", ""},
		{"gs://b/p?endpoint=http://127.0.0.1:4443", "b", "p", "http://127.0.0.1:4443"},
		{"gs://b?endpoint=https%3A%2F%2Fstorage.example%2Fstorage%2Fv1%2F", "b", "", "https://storage.example/storage/v1/"},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		bucket, prefix, opts, err := parseURL(u)
		if err != nil {
			t.Errorf("parseURL(%s): %v", tc.raw, err)
			continue
		}
		if bucket != tc.bucket || prefix != tc.prefix || opts.Endpoint != tc.endpoint || opts.Client != nil {
			t.Errorf("parseURL(%s) = %q, %q, %+v; want %q, %q, endpoint %q", tc.raw, bucket, prefix, *opts, tc.bucket, tc.prefix, tc.endpoint)
		}
	}
}

func TestParseURLErrors(t *testing.T) {
	tests := []struct {
		raw  string
		want string // the whole error text
	}{
		{"gs://user:hunter2@b", "gcs: a store URL carries no credentials: Application Default Credentials provide them (e.g. GOOGLE_APPLICATION_CREDENTIALS)"},
		{"gs:///p", "gcs: the URL names no bucket: want gs://BUCKET[/PREFIX]"},
		{"gs:b", "gcs: the URL names no bucket: want gs://BUCKET[/PREFIX]"},
		{"gs://b:4443/p", `gcs: bucket "b:4443" has a port: use endpoint= for a server's address`},
		{"gs://b?endpoint=http://a&endpoint=http://b", "gcs: parameter endpoint given 2 times"},
		{"gs://b/a/../c", `gcs: prefix "a/../c": blob: invalid key: ".." segment`},
		{"gs://b?region=x&zone=y", `storeurl: gs: unknown URL parameters "region", "zone" (gs accepts: endpoint; every scheme accepts: ` +
			`max_file_bytes, max_files, policy, prefix, readonly, secrets, timeout, view_limit)`},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = parseURL(u)
		if err == nil || err.Error() != tc.want {
			t.Errorf("parseURL(%s) error = %v\nwant %s", tc.raw, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseURL(%s) error shows the password: %v", tc.raw, err)
		}
	}
}

func TestParseEndpoint(t *testing.T) {
	good := map[string]string{
		"http://127.0.0.1:4443":                 "http://127.0.0.1:4443/storage/v1/",
		"http://127.0.0.1:4443/":                "http://127.0.0.1:4443/storage/v1/",
		"https://storage.example/storage/v1":    "https://storage.example/storage/v1/",
		"https://storage.example/custom/path/":  "https://storage.example/custom/path/",
		"https://private.example:8443/storage/": "https://private.example:8443/storage/",
	}
	for raw, want := range good {
		u, err := parseEndpoint(raw)
		if err != nil || u.String() != want {
			t.Errorf("parseEndpoint(%s) = %v, %v; want %s", raw, u, err, want)
		}
	}
	bad := map[string]string{
		"127.0.0.1:4443":               `gcs: endpoint "127.0.0.1:4443": want http[s]://host[:port][/path]`,
		"ftp://h":                      `gcs: endpoint "ftp://h": want http[s]://host[:port][/path]`,
		"http://":                      `gcs: endpoint "http://": want http[s]://host[:port][/path]`,
		"http://h/?x=1":                `gcs: endpoint "http://h/?x=1": want http[s]://host[:port][/path]`,
		"http://user:hunter2@h":        `gcs: endpoint "http://h": want http[s]://host[:port][/path]`,
		"http://user:hunter2@h:bad:80": `gcs: endpoint "(unparsable URL)": want http[s]://host[:port][/path]`,
	}
	for raw, want := range bad {
		if _, err := parseEndpoint(raw); err == nil || err.Error() != want {
			t.Errorf("parseEndpoint(%s) error = %v\nwant %s", raw, err, want)
		}
	}
}

// parseURL parses u as storeurl.Open does before it opens the store.
func parseURL(u *url.URL) (bucket, prefix string, opts *Options, err error) {
	loc, err := backend.Parse(u)
	if err != nil {
		return "", "", nil, err
	}
	return loc.Bucket, loc.Prefix, options(loc), nil
}
