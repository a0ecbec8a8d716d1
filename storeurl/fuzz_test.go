package storeurl

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// fuzzBackends stand for the two shapes of backend: a bucket URL whose
// backend applies the prefix (s3, gs, azblob) and a plain one that leaves
// it to blob.Prefix (file, mem). Parse runs every check Open makes before
// it calls the backend, so nothing opens.
var fuzzBackends = []Backend{
	{Name: "bucket", Params: []string{"region", "endpoint"}, NativePrefix: true,
		Bucket: &BucketSyntax{Noun: "bucket", Credentials: "the environment provides them"}, Open: nil},
	{Name: "plain", Params: []string{"pool_size"}},
}

// fuzzSeeds are the URLs of the package's tests and of the backends'
// documentation.
var fuzzSeeds = []string{
	"./memories", "/srv/memories", "./a?b#c", "1a:b", "file:rel/dir", "file:///srv/m?readonly=1",
	"File://localhost/srv", "file:///missing#frag", "mem://", "mem://#x", "mem://%zz", "mem:///dir", "mem://?a=%zz",
	"mem://?prefix=a&prefix=b", "mem://?prefix=a/../b", "mem://?prefix=.cloudmem/history", "mem://?readonly=TRUE",
	"mem://?readonly=1&zz=1&Prefix=a&foo", "mem://?timeout=0s", "mem://?timeout=1m30s", "mem://?timeout=24h0m1s",
	"mem://?encrypt=age&age_identity_file=/k", "s3://bucket/dir?region=eu&prefix=p&readonly=1",
	"s3://b?endpoint=http://127.0.0.1:9000&path_style=true", "s3://b:9000/x", "s3://user:hunter2@b/x",
	"gs://bucket/a/b?prefix=c", "azblob://container/p?account=a&endpoint=http%3A%2F%2F127.0.0.1%3A10000",
	"redis://:s3cret@h:1/2?pool_size=-5", "redis://h?pool_size=1000000000&max_retries=-1&dial_timeout=2",
	"redis-cluster://a:7000,b:7001?prefix=p", "capture-native://h?prefix=%2Fteam%2Fp%2F",
}

// FuzzParse feeds any string to the parser Open uses, and to the checks
// Open makes before it calls a backend, for both shapes of backend. It
// must not panic, and what it accepts must hold what Location promises.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := parse(raw)
		if err != nil {
			if u != nil {
				t.Fatalf("parse(%q) returned a URL and the error %v", raw, err)
			}
			return
		}
		for _, b := range fuzzBackends {
			v := *u
			loc, err := b.Parse(&v)
			if err != nil {
				continue
			}
			checkLocation(t, raw, b, loc)
		}
	})
}

// checkLocation checks what Parse promises of a Location it returns.
func checkLocation(t *testing.T, raw string, b Backend, loc *Location) {
	t.Helper()
	if loc.Params == nil {
		t.Fatalf("%s %q: nil Params", b.Name, raw)
	}
	for name, vals := range loc.Params {
		if !slices.Contains(b.Params, name) && !(b.NativePrefix && name == paramPrefix) {
			t.Fatalf("%s %q: parameter %q reached the backend", b.Name, raw, name)
		}
		if len(vals) != 1 {
			t.Fatalf("%s %q: parameter %q given %d times reached the backend", b.Name, raw, name, len(vals))
		}
	}
	if loc.Timeout != 0 && (loc.Timeout < minTimeout || loc.Timeout > maxTimeout) {
		t.Fatalf("%s %q: timeout %v out of range", b.Name, raw, loc.Timeout)
	}
	if loc.Prefix != "" {
		if !b.NativePrefix {
			t.Fatalf("%s %q: prefix %q for a backend that does not apply it", b.Name, raw, loc.Prefix)
		}
		if err := blob.CheckKey(loc.Prefix); err != nil || checkUnreserved(loc.Prefix) != nil {
			t.Fatalf("%s %q: prefix %q is not a valid, unreserved key", b.Name, raw, loc.Prefix)
		}
	}
	if b.Bucket != nil {
		if loc.Bucket == "" || strings.ContainsAny(loc.Bucket, "/?#") {
			t.Fatalf("%s %q: bucket %q", b.Name, raw, loc.Bucket)
		}
		if loc.URL.User != nil {
			t.Fatalf("%s %q: credentials reached a bucket backend", b.Name, raw)
		}
	}
	if _, err := url.ParseQuery(loc.URL.RawQuery); err != nil {
		t.Fatalf("%s %q: the URL handed on has a malformed query %q", b.Name, raw, loc.URL.RawQuery)
	}
}
