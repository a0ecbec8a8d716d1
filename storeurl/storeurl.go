// Package storeurl opens a blob.Store from one configuration string, so that
// an application moves from a local directory to a cloud bucket by changing
// that string and nothing else.
//
// # URLs
//
// A URL names a backend by its scheme: mem://, file:///var/lib/agent, and the
// schemes of the other backends. Each backend package (mem included)
// registers its scheme from an init function, so a program gets a scheme by
// importing the package, or every scheme (and encryption) at once with
//
//	import _ "github.com/cloudmem/cloudmem/backends/all"
//
// This package imports only package blob: it knows no backend and no
// wrapper beyond the three it registers itself (prefix, readonly and
// limits).
//
// # Registries
//
// The schemes and wrappers live in a Mux. The package functions (Register,
// RegisterWrapper, Open, OpenReadOnly, OpenWith, Check, Schemes, Wrappers,
// Without) use DefaultMux, which the packages' init functions fill; a test
// builds its own registry with NewMux or DefaultMux.Clone, so that what it
// registers shows in no other test.
//
// A string with no scheme (no "name:" before the first '/') is a local
// directory path for the file store, taken literally: "./memories" and
// "/srv/memories" mean the same as file:./memories and file:///srv/memories.
// A bare path has no query parameters (a '?' in it is part of the path); use
// the file: form to add them.
//
// # Shared parameters
//
// Every scheme accepts timeout= and the parameters of every registered
// wrapper. Open removes a wrapper's parameters from the URL before the
// backend sees it and applies the wrapper once (see Wrappers); it checks
// timeout= and leaves it for the backend to read with Timeout. With
// package crypt linked, the parameters are:
//
//	prefix=DIR                 scope the store to the keys under DIR (blob.Prefix); DIR must be a valid key
//	encrypt=age                encrypt every object with age (package crypt)
//	age_identity_file=PATH     the age identity (private key) file, for encrypt=age; without it,
//	                           the identity file's content in $CLOUDMEM_AGE_IDENTITY
//	age_recipients=age1..,...  comma-separated age recipients (public keys), for encrypt=age;
//	                           without it, the identities' own
//	age_key_fingerprint=HEX    pin the store's integrity key (crypt.Config.KeyFingerprint), for a
//	                           reader whose identities did not create the store (an escrow key)
//	readonly=true              refuse every write (blob.ReadOnly); true, false, 1 or 0
//	max_files=N                the memory tree's file limit (memory.Options.MaxFiles), or off
//	max_file_bytes=N           the largest memory file, in bytes (memory.Options.MaxFileBytes)
//	view_limit=N               the code points a view shows (memory.Options.ViewLimit), or off
//	timeout=DURATION           the deadline of each storage call, in Go duration syntax (timeout=1s,
//	                           timeout=1m30s), from 1ms to 24h. Without it, the backend's
//	                           default: blob.DefaultTimeout (30s). A call that exceeds it fails
//	                           with blob.ErrTimeout. The backend applies it (see Timeout).
//
// Each may appear at most once. Any other parameter belongs to the backend:
// Open refuses one the backend does not name (Backend.Params), or names and
// is given twice; so is a wrapper's parameter when the program does not link
// the wrapper (encrypt=age without package crypt is refused, never ignored).
//
// # Wrappers
//
// A wrapper is a layer around the backend's store that a URL parameter
// selects. A package registers it with RegisterWrapper, giving its
// parameters and its place in a fixed order (the Order constants), and Open
// applies the selected ones from the backend outwards:
//
//	backend            the scheme's store (its own prefix, when NativePrefix)
//	prefix     100     prefix=; registered here
//	encryption 200     encrypt=age...; registered by package crypt (crypt/storeurl.go)
//	history    300     above encryption, so that its records are encrypted like the memories
//	readonly   400     readonly=; registered here; so nothing beneath it writes
//	limits     500     max_files=, max_file_bytes=, view_limit=; registered here; carried in the Traits
//
// A URL without encryption gets, in encryption's place, the guard of
// blob.RefuseEncrypted: if the store holds the encryption layer's key object
// (it is an encrypted store opened without encrypt=age), every call fails
// with blob.ErrEncrypted, so no plaintext is written into it and no
// ciphertext is read back as content. The guard costs one Stat, on the
// store's first call.
//
// Every wrapper's Check runs before the backend is opened (and Check runs
// them alone), so a malformed parameter costs no connection; if a Wrap
// fails, the store opened so far is closed.
//
// # Backends
//
// A backend package registers a Backend for its scheme in init (with
// Register), naming its own parameters and, for a bucket backend, its URL
// form SCHEME://BUCKET[/PREFIX] (Backend.Bucket). Open parses the URL and
// its query once, for every backend alike: it removes and checks the shared
// parameters, refuses unknown and repeated parameters, for a bucket URL
// checks the host and joins the path with prefix=, and hands the backend's
// Open a Location: the URL, its parameters, the bucket, the prefix when the
// backend applies it natively, and the timeout. The prefix is applied in one
// place, the blob.Prefix wrapper, except for a NativePrefix backend, which
// must apply it itself (Redis keeps it inside the cluster hash tag; Azure
// escapes it with the keys into blob names; S3 and GCS hand it to their Open,
// whose prefix argument Go users scope a store with). The backend checks only what is
// its own: a host or path where none belongs, its parameters' values.
//
// # Places
//
// PlaceOf reads from a URL where its store keeps its objects (a Place:
// the backend, a location such as a bucket on its server, a directory of
// keys), as the backend's Backend.Place says, and Place.Overlaps tells
// whether two stores may hold the same objects, so that a program that
// opens several side by side (a mount table) can refuse that before it
// opens any.
package storeurl

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// pathScheme is the scheme a bare path (a string with no scheme) opens.
// It is the file store's scheme; storeurl names it here rather than
// importing the backend.
const pathScheme = "file"

// Register makes a backend available under scheme in DefaultMux (see
// Mux.Register). It is meant to be called from the backend package's init
// function.
func Register(scheme string, b Backend) { DefaultMux.Register(scheme, b) }

// Schemes returns the schemes registered in DefaultMux, sorted.
func Schemes() []string { return DefaultMux.Schemes() }

// Open opens the store that rawURL names (see the package documentation),
// wrapped as its shared parameters say.
//
// Errors in the URL's form, its scheme, timeout, every wrapper's parameters
// and the backend's parameters (unknown or repeated ones; for a bucket URL
// its host and prefix) are reported before the backend is called, as Check
// reports them; errors from the backend's Open and from a wrapper's Wrap
// are returned unchanged. No error contains the URL's password. If a wrapper
// fails after the backend opened its store, that store is closed when it
// implements io.Closer.
func Open(ctx context.Context, rawURL string) (blob.Store, error) {
	return DefaultMux.open(ctx, rawURL, Options{})
}

// OpenReadOnly opens the store that rawURL names as Open does, read-only
// (blob.ReadOnly, as with readonly=true, outermost): the backend is told
// (Location.ReadOnly), so that it may refuse a store that does not exist
// rather than create it, as the file store refuses a missing directory
// with an error wrapping file.ErrNoStore.
func OpenReadOnly(ctx context.Context, rawURL string) (blob.Store, error) {
	return DefaultMux.open(ctx, rawURL, Options{ReadOnly: true})
}

// Options are what OpenWith takes beside the URL.
type Options struct {
	// ReadOnly opens the store read-only, as OpenReadOnly does.
	ReadOnly bool

	// Layers are the program's own functions for some wrappers' layers,
	// by the wrappers' registered names (prefix cannot be one). Each is
	// called in place of its wrapper's Wrap, at the wrapper's place in
	// the order, and always, whether the URL selects the wrapper or not;
	// it gets those of the wrapper's parameters the URL gives (checked by
	// the wrapper's Check; none when the URL gives none). When the store
	// is opened read-only (the URL's readonly=true, or ReadOnly), it gets
	// the store beneath it read-only too: the program writes through its
	// layer directly, not through the readonly layer above it.
	//
	// It is for a program that must hold one layer itself: the CLI's
	// history commands build the history Store, to read its records and
	// restore through it, whether the URL turns history on or not.
	Layers map[string]WrapFunc
}

// OpenWith opens the store that rawURL names as Open does, with opts.
// A name in opts.Layers that no wrapper is registered under, or prefix, or
// a nil function, is an error, and nothing is opened.
func OpenWith(ctx context.Context, rawURL string, opts Options) (blob.Store, error) {
	return DefaultMux.open(ctx, rawURL, opts)
}

// Check reports what is wrong with rawURL without opening anything: it
// makes every check Open makes before it calls the backend (the URL's form,
// its scheme, timeout=, every wrapper's parameters, and the names of the
// backend's own, refused when unknown or repeated), and returns Open's
// error for the first that fails. It sends no request and creates nothing;
// it reads the local files a parameter names (an age identity file, a
// policy file). The values of a backend's own parameters (Redis's
// pool_size=, a database number) are the backend's to check when it opens,
// and a nil error does not say the store answers (credentials, a bucket
// that exists, a server that is up): Open tells.
func Check(rawURL string) error { return DefaultMux.Check(rawURL) }

// IsPath reports whether raw is a bare path rather than a URL: it does not
// start with "scheme:". Open takes a bare path literally, as a directory of
// the file store, '?' and '#' included.
func IsPath(raw string) bool { return raw != "" && !hasScheme(raw) }

// Scheme returns the scheme of the backend rawURL names, in lower case, as
// Open reads it: "file" for a bare path. It checks and opens nothing, and
// returns "" for the empty string. A program labels a store with it (the
// telemetry's backend attribute) without parsing the URL itself.
func Scheme(rawURL string) string {
	if rawURL == "" {
		return ""
	}
	if !hasScheme(rawURL) {
		return pathScheme
	}
	s, _, _ := strings.Cut(rawURL, ":")
	return strings.ToLower(s)
}

// parse turns rawURL into a URL with a registered-looking scheme, mapping a
// bare path to the file scheme.
func parse(rawURL string) (*url.URL, error) {
	if rawURL == "" {
		return nil, errors.New("storeurl: empty URL")
	}
	if !hasScheme(rawURL) {
		return &url.URL{Scheme: pathScheme, Path: rawURL}, nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error repeats the whole URL, password included; keep only
		// the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("storeurl: malformed URL: %w", err)
	}
	if strings.Contains(rawURL, "#") { // url.Parse splits at the first #
		return nil, errors.New("storeurl: a store URL has no #fragment")
	}
	return u, nil
}

// hasScheme reports whether s starts with "scheme:".
func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && validScheme(s[:i])
}

// validScheme reports whether s is a URL scheme: a letter, then letters,
// digits, '+', '-' or '.'.
func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// The range of timeout= (docs/spec.md "Store URLs: ranges, start-up,
// errors").
const (
	minTimeout = time.Millisecond
	maxTimeout = 24 * time.Hour
)

// checkTimeout validates the timeout parameter, removes it from query and
// returns its duration (0 when query has none).
func checkTimeout(query url.Values) (time.Duration, error) {
	values, ok := query[paramTimeout]
	if !ok {
		return 0, nil
	}
	delete(query, paramTimeout)
	d, err := time.ParseDuration(values[0])
	if err != nil || d < minTimeout || d > maxTimeout {
		return 0, fmt.Errorf("storeurl: timeout=%q: want a Go duration from 1ms to 24h, such as 1s, 500ms or 2m", values[0])
	}
	return d, nil
}

// sharedParams returns the names of the shared parameters, sorted: timeout
// and those of every wrapper of ws.
func sharedParams(ws []namedWrapper) []string {
	names := []string{paramTimeout}
	for _, w := range ws {
		names = append(names, w.Params...)
	}
	slices.Sort(names)
	return names
}

// checkParams returns an error naming every parameter of query that is
// neither one of allowed nor a shared parameter (prefix, readonly and the
// encryption ones, which Open has normally removed already), sorted by name;
// nil when there is none. The error reads, for example,
// `storeurl: s3: unknown URL parameters "regoin", "x" (s3 accepts: endpoint, region; every scheme accepts: ...)`.
func checkParams(scheme string, query url.Values, allowed, shared []string) error {
	var unknown []string
	for name := range query {
		if !slices.Contains(allowed, name) && !slices.Contains(shared, name) {
			unknown = append(unknown, fmt.Sprintf("%q", name))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	noun := "parameter"
	if len(unknown) > 1 {
		noun = "parameters"
	}
	own := slices.Sorted(slices.Values(allowed))
	accepts := scheme + " accepts: " + strings.Join(own, ", ") + "; "
	if len(own) == 0 {
		accepts = ""
	}
	return fmt.Errorf("storeurl: %s: unknown URL %s %s (%severy scheme accepts: %s)",
		scheme, noun, strings.Join(unknown, ", "), accepts, strings.Join(shared, ", "))
}
