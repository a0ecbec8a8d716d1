package storeurl

import (
	"net/url"
	"strings"
)

// Place is where the store a URL opens keeps its objects, as far as the URL
// tells: a backend, a storage location in it, and a directory of keys
// there. Two stores whose places overlap (Place.Overlaps) may hold the same
// objects, so that a write through one changes what the other lists and
// counts: a program that opens several stores side by side (the CLI's
// --mount) refuses that before anything opens.
//
// A place is read from the URL: nothing is opened and no server is asked
// (the file store alone looks at the file system, to follow symbolic
// links). So it tells apart what the URLs spell apart, and little more
// (each backend's Place says what it compares). In particular, some
// spellings of one location are two places to it: two names differing only
// in the case of their letters on a file system that ignores case, a
// directory and a bind mount of it, a server named by its host name and by
// its IP address, an endpoint given in the URL and the same endpoint given
// by the environment.
//
// The zero Place is a place of its own, which overlaps nothing: the place
// of a backend whose every store is new (mem://), or of one that does not
// say where it keeps its objects (Backend.Place is nil).
//
// A Place is a comparable value, safe for concurrent use.
type Place struct {
	// Backend is the name of the backend (Backend.Name, else its scheme):
	// "file", "s3", "gcs", "azure", "redis". PlaceOf sets it; a
	// Backend.Place function leaves it empty.
	Backend string

	// Root is the storage location within the backend, compared as it
	// is: for a bucket, the bucket and the server it is on; for Redis,
	// the server, the database and the store's prefix; "" for the one
	// file system of the file store.
	Root string

	// Prefix is the directory of keys the store sees within Root, as
	// segments joined by '/' without a '/' at either end; "" is the whole
	// of Root. A store sees every key beneath its prefix, so places with
	// one Root overlap when one's Prefix is the other's or lies beneath
	// it. (A backend whose prefixes are each a namespace of their own, as
	// Redis's are, puts its prefix into Root instead.)
	Prefix string
}

// IsZero reports whether p is the zero Place, a place of its own.
func (p Place) IsZero() bool { return p == Place{} }

// Overlaps reports whether the stores of p and q may hold the same objects:
// neither is the zero Place, they have the same Backend and Root, and one's
// Prefix is the other's or lies beneath it, segment by segment ("a"
// overlaps "a" and "a/b", not "ab"; "" overlaps every prefix). Names are
// compared byte for byte, so letters in another case are other names.
func (p Place) Overlaps(q Place) bool {
	if p.IsZero() || q.IsZero() || p.Backend != q.Backend || p.Root != q.Root {
		return false
	}
	return within(p.Prefix, q.Prefix) || within(q.Prefix, p.Prefix)
}

// within reports whether the directory inner is outer or lies beneath it.
func within(outer, inner string) bool {
	return outer == "" || inner == outer || strings.HasPrefix(inner, outer+"/")
}

// PlaceOf returns the place of the store rawURL names (see Place), with
// DefaultMux's backends and wrappers. It checks rawURL as Check does, and
// returns Check's error when it fails; it opens nothing and sends no
// request.
func PlaceOf(rawURL string) (Place, error) { return DefaultMux.PlaceOf(rawURL) }

// PlaceOf returns the place of the store rawURL names with m's backends and
// wrappers, as the package function PlaceOf does with DefaultMux's.
//
// The place is the backend's (Backend.Place), with the directory of
// prefix= added beneath its Prefix where storeurl applies the prefix (the
// backend's is not NativePrefix); a NativePrefix backend's Place accounts
// for Location.Prefix itself.
func (m *Mux) PlaceOf(rawURL string) (Place, error) {
	b, loc, layers, err := m.locate(rawURL)
	if err != nil || b.Place == nil {
		return Place{}, err
	}
	p, err := b.Place(loc)
	if err != nil {
		return Place{}, err
	}
	p.Backend = b.Name
	if p.Backend == "" {
		p.Backend = loc.URL.Scheme
	}
	p.Prefix = strings.Trim(p.Prefix, "/")
	for _, l := range layers {
		if l.w.Order == OrderPrefix {
			p.Prefix = strings.Trim(p.Prefix+"/"+l.params.Get(paramPrefix), "/")
		}
	}
	return p, nil
}

// BucketPlace returns the place of a Backend.Bucket URL whose backend
// applies the prefix natively: its bucket, in lower case (bucket and
// container names have no upper case), on the server that servers name
// (each the value of one of the backend's parameters that picks the
// server or the account, "" when the URL does not give it: see
// Endpoint), with loc.Prefix.
func BucketPlace(loc *Location, servers ...string) Place {
	root := strings.ToLower(loc.Bucket)
	for _, s := range servers {
		root += "@" + s
	}
	return Place{Root: root, Prefix: loc.Prefix}
}

// Endpoint returns raw, a server's address as a parameter gives it
// (endpoint=http://127.0.0.1:9000/), in one spelling of it: the scheme and
// host in lower case, without user info, without the scheme's default port (80 for http, 443
// for https), and without a trailing '/'. A value that is not an absolute
// URL comes back lower-cased and without a trailing '/'. It is for a
// Backend.Place function.
func Endpoint(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return strings.TrimRight(strings.ToLower(raw), "/")
	}
	u.Scheme, u.Host, u.User = strings.ToLower(u.Scheme), strings.ToLower(u.Host), nil
	if port := u.Port(); (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		u.Host = u.Hostname()
		if strings.Contains(u.Host, ":") { // an IPv6 address keeps its brackets
			u.Host = "[" + u.Host + "]"
		}
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String()
}
