package storeurl

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// BucketSyntax describes the URLs of a bucket backend,
// SCHEME://BUCKET[/PREFIX]?PARAMS, for ParseBucket.
type BucketSyntax struct {
	Backend     string   // the backend's name, which starts its errors: "s3"
	Noun        string   // what the host names: "bucket", "container"
	Params      []string // the backend's own parameters; each may appear once
	Credentials string   // where credentials come from instead, for the error on a URL that holds some
}

// Bucket is a parsed bucket URL.
type Bucket struct {
	Name    string        // the bucket (the URL's host), never empty
	Prefix  string        // the URL's path joined with prefix=, without surrounding '/': "" or a valid key
	Params  url.Values    // the URL's query: the backend's own parameters (and prefix, timeout)
	Timeout time.Duration // timeout=, or 0 (see Timeout)
}

// ParseBucket parses u, a URL a bucket backend's Open received, once for
// every such backend: it rejects unknown parameters (CheckParams with
// syn.Params), a parameter of the backend given twice, user info (a store
// URL never holds credentials), a URL without a host and a host with a
// port (the server's address goes in a parameter such as endpoint=), and
// joins the path with prefix= into one prefix, checked as a key. Its errors
// start with syn.Backend and ": ".
func ParseBucket(u *url.URL, syn BucketSyntax) (Bucket, error) {
	if err := CheckParams(u, syn.Params...); err != nil {
		return Bucket{}, err
	}
	if u.User != nil {
		return Bucket{}, fmt.Errorf("%s: a store URL carries no credentials: %s", syn.Backend, syn.Credentials)
	}
	if u.Opaque != "" || u.Host == "" {
		return Bucket{}, fmt.Errorf("%s: the URL names no %s: want %s://%s[/PREFIX]", syn.Backend, syn.Noun, u.Scheme, strings.ToUpper(syn.Noun))
	}
	if u.Port() != "" {
		return Bucket{}, fmt.Errorf("%s: %s %q has a port: use endpoint= for a server's address", syn.Backend, syn.Noun, u.Host)
	}
	query := u.Query() // CheckParams has parsed it
	for _, name := range syn.Params {
		if n := len(query[name]); n > 1 {
			return Bucket{}, fmt.Errorf("%s: parameter %s given %d times", syn.Backend, name, n)
		}
	}
	prefix := strings.Trim(u.Path, "/")
	if p := strings.Trim(query.Get(paramPrefix), "/"); p != "" {
		prefix = strings.Trim(prefix+"/"+p, "/")
	}
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return Bucket{}, fmt.Errorf("%s: prefix %q: %w", syn.Backend, prefix, err)
		}
	}
	return Bucket{Name: u.Host, Prefix: prefix, Params: query, Timeout: Timeout(u)}, nil
}
