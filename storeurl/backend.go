package storeurl

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// Backend is what a backend package registers for its scheme. Open parses
// the URL for it, once, as the other fields describe, and hands the result
// to Open as a Location.
type Backend struct {
	// Name is the backend's name, which starts the errors of its URL
	// ("s3", where the scheme is s3; "gcs", where it is gs). Empty means
	// the scheme.
	Name string

	// Params are the backend's own query parameters. Open refuses any
	// other parameter that is not a shared one, and a parameter of Params
	// given more than once, before the backend is called.
	Params []string

	// Bucket, when not nil, says the URL names a bucket:
	// SCHEME://BUCKET[/PREFIX]?PARAMS. Open then refuses user info (a store
	// URL never holds credentials), a URL without a host and a host with a
	// port (a server's address goes in a parameter such as endpoint=), and
	// joins the URL's path with prefix= into the store's prefix. When
	// nil, the backend reads the host, path and user info of Location.URL
	// itself, and must reject what it does not understand.
	Bucket *BucketSyntax

	// NativePrefix, when true, hands the prefix (Location.Prefix) to the
	// backend to apply itself (for example, Redis puts it inside a
	// cluster hash tag). The store it returns must then see only the keys
	// of its prefix, and stores opened with different prefixes must be
	// disjoint; whether a prefix also sees longer prefixes nested under it
	// is the backend's to document (blob.Prefix: yes; Redis: no, each
	// prefix is its own namespace). When false (the zero value), Open wraps
	// the store with blob.Prefix, and Location.Prefix is always "".
	NativePrefix bool

	// Place, when not nil, returns the place of the store Open would open
	// from loc (see Place; PlaceOf calls it): its Root and Prefix, which
	// must account for loc.Prefix when NativePrefix. It opens nothing and
	// asks no server; it may look at the local file system (the file
	// store follows symbolic links). When nil, every store of the
	// backend is a place of its own (the zero Place), which overlaps no
	// other: right for mem://, where each Open makes a new store.
	Place func(loc *Location) (Place, error)

	// Open opens a store from loc. It must return errors that name no
	// credentials. Open must not be nil.
	Open func(ctx context.Context, loc *Location) (blob.Store, error)
}

// BucketSyntax describes the URLs of a bucket backend (Backend.Bucket).
type BucketSyntax struct {
	Noun        string // what the host names, for errors: "bucket", "container"
	Credentials string // where credentials come from instead, for the error on a URL that holds some
}

// Location is a store URL as Open hands it to a backend's Open: parsed once,
// the shared parameters checked and removed, the backend's own checked
// against Backend.Params. The backend may keep or modify it.
type Location struct {
	// URL is the URL, its scheme in lower case and its query holding only
	// the backend's own parameters (and, for a NativePrefix backend,
	// prefix= in its cleaned form, so that the URL reads as the store it
	// opens). A backend reads its parameters from Params, not from
	// URL.RawQuery.
	URL *url.URL

	// Params are the backend's own parameters (of Backend.Params), each
	// given once. It is never nil.
	Params url.Values

	// Bucket is the bucket (or container) of a Backend.Bucket URL: its
	// host, never empty. It is "" for other backends.
	Bucket string

	// Prefix is the prefix a NativePrefix backend applies: for a bucket
	// URL its path joined with prefix=, otherwise prefix=; without
	// surrounding '/', and a valid key (blob.CheckKey), or "" for the
	// whole store. For any other backend it is "": Open applies the
	// prefix with blob.Prefix.
	Prefix string

	// Timeout is timeout=, the deadline of each storage call, or 0 for the
	// backend's default (blob.DefaultTimeout). The backend passes it to its
	// Options.
	Timeout time.Duration

	// ReadOnly reports that the store is opened to be read only
	// (readonly=true, or OpenReadOnly): nothing will write through it. A
	// backend may then refuse a store that does not exist instead of
	// creating it (the file store does).
	ReadOnly bool
}

// Parse checks u as Open checks a URL of b's scheme, without opening
// anything, and returns what Open would hand b.Open. The wrappers'
// parameters are checked and left out, as Open leaves
// them out; its errors are Open's. A backend's tests use it to check its URL
// syntax without a server.
func (b Backend) Parse(u *url.URL) (*Location, error) {
	v := *u
	v.Scheme = strings.ToLower(v.Scheme)
	loc, _, err := b.locate(&v, DefaultMux.registeredWrappers())
	return loc, err
}

// layer is a wrapper Open applies, with its parameters from the URL.
type layer struct {
	w      namedWrapper
	params url.Values
}

// locate parses the query of u once: it takes out and checks the shared
// parameters, returning the wrappers to apply in their order, and checks the
// rest against b. ws are the wrappers known (a Mux's), in Order. It
// modifies u.
func (b Backend) locate(u *url.URL, ws []namedWrapper) (*Location, []layer, error) {
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, nil, fmt.Errorf("storeurl: malformed query: %w", err)
	}
	shared := sharedParams(ws)
	for _, name := range shared {
		if n := len(query[name]); n > 1 {
			return nil, nil, fmt.Errorf("storeurl: parameter %s given %d times", name, n)
		}
	}
	timeout, err := checkTimeout(query)
	if err != nil {
		return nil, nil, err
	}
	// Take each wrapper's parameters out of the query and check them, in
	// the order the wrappers apply.
	var (
		layers []layer
		param  string // prefix=, cleaned
		prefix string // the store's prefix: param, joined to a bucket's path
	)
	for _, w := range ws {
		params := url.Values{}
		for _, name := range w.Params {
			if v, ok := query[name]; ok {
				params[name] = v
				delete(query, name)
			}
		}
		if len(params) == 0 {
			continue
		}
		if err := w.Check(params); err != nil {
			return nil, nil, err
		}
		if w.Order == OrderPrefix {
			param = params.Get(paramPrefix)
			prefix = param
			if b.NativePrefix || b.Bucket != nil {
				continue // the backend applies it, or the bucket's path joins it below
			}
		}
		layers = append(layers, layer{w, params})
	}

	name := b.Name
	if name == "" {
		name = u.Scheme
	}
	if err := checkParams(u.Scheme, query, b.Params, shared); err != nil {
		return nil, nil, err
	}
	for _, p := range b.Params {
		if n := len(query[p]); n > 1 {
			return nil, nil, fmt.Errorf("%s: parameter %s given %d times", name, p, n)
		}
	}
	loc := &Location{URL: u, Params: query, Timeout: timeout}
	for _, l := range layers {
		if l.w.Order == OrderReadOnly {
			loc.ReadOnly, _ = readOnlyValue(l.params.Get(paramReadOnly)) // checked above
		}
	}
	if b.Bucket != nil {
		if loc.Bucket, prefix, err = b.Bucket.parse(name, u, prefix); err != nil {
			return nil, nil, err
		}
		if !b.NativePrefix && prefix != "" {
			layers = append([]layer{{namedWrapper{"prefix", prefixLayer}, url.Values{paramPrefix: {prefix}}}}, layers...)
		}
	}
	shown := maps.Clone(query)
	if b.NativePrefix {
		loc.Prefix = prefix
		if param != "" {
			shown.Set(paramPrefix, param)
		}
	}
	u.RawQuery = shown.Encode()
	return loc, layers, nil
}

// parse checks a bucket URL and returns its bucket and its prefix: the
// path joined with prefix (prefix=, cleaned).
func (syn *BucketSyntax) parse(name string, u *url.URL, prefix string) (bucket, joined string, err error) {
	if u.User != nil {
		return "", "", fmt.Errorf("%s: a store URL carries no credentials: %s", name, syn.Credentials)
	}
	if u.Opaque != "" || u.Host == "" {
		return "", "", fmt.Errorf("%s: the URL names no %s: want %s://%s[/PREFIX]", name, syn.Noun, u.Scheme, strings.ToUpper(syn.Noun))
	}
	if u.Port() != "" {
		return "", "", fmt.Errorf("%s: %s %q has a port: use endpoint= for a server's address", name, syn.Noun, u.Host)
	}
	joined = strings.Trim(u.Path, "/")
	if prefix != "" {
		joined = strings.Trim(joined+"/"+prefix, "/")
	}
	if joined != "" {
		if err := blob.CheckKey(joined); err != nil {
			return "", "", fmt.Errorf("%s: prefix %q: %w", name, joined, err)
		}
		if err := checkUnreserved(joined); err != nil {
			return "", "", fmt.Errorf("%s: prefix %q: %w", name, joined, err)
		}
	}
	return u.Host, joined, nil
}
