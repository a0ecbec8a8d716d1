package storeurl_test

import (
	"context"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Two places overlap when they have one backend and root and one prefix is
// the other or lies beneath it, segment by segment; the zero Place overlaps
// nothing, itself included.
func TestPlaceOverlaps(t *testing.T) {
	s3 := func(root, prefix string) storeurl.Place {
		return storeurl.Place{Backend: "s3", Root: root, Prefix: prefix}
	}
	for _, tc := range []struct {
		name string
		a, b storeurl.Place
		want bool
	}{
		{"same prefix", s3("kb@", "a"), s3("kb@", "a"), true},
		{"one beneath the other", s3("kb@", "a"), s3("kb@", "a/b"), true},
		{"deeper beneath", s3("kb@", "a"), s3("kb@", "a/b/c"), true},
		{"whole bucket and a prefix", s3("kb@", ""), s3("kb@", "a/b"), true},
		{"whole bucket twice", s3("kb@", ""), s3("kb@", ""), true},
		{"a name that extends another", s3("kb@", "a"), s3("kb@", "ab"), false},
		{"a name that extends another, deeper", s3("kb@", "a/b"), s3("kb@", "a/bc/d"), false},
		{"siblings", s3("kb@", "a/b"), s3("kb@", "a/c"), false},
		{"other case", s3("kb@", "a"), s3("kb@", "A"), false},
		{"other bucket", s3("kb@", "a"), s3("kb2@", "a"), false},
		{"other server", s3("kb@http://127.0.0.1:9000", "a"), s3("kb@http://127.0.0.1:9001", "a"), false},
		{"other backend", s3("kb@", "a"), storeurl.Place{Backend: "gcs", Root: "kb@", Prefix: "a"}, false},
		{"zero and zero", storeurl.Place{}, storeurl.Place{}, false},
		{"zero and a place", storeurl.Place{}, s3("kb@", ""), false},
	} {
		if got := tc.a.Overlaps(tc.b); got != tc.want {
			t.Errorf("%s: %+v.Overlaps(%+v) = %v, want %v", tc.name, tc.a, tc.b, got, tc.want)
		}
		if got := tc.b.Overlaps(tc.a); got != tc.want {
			t.Errorf("%s: %+v.Overlaps(%+v) = %v, want %v", tc.name, tc.b, tc.a, got, tc.want)
		}
	}
}

// PlaceOf names the backend, puts the directory of prefix= beneath the
// backend's Prefix where storeurl applies the prefix (not for a
// NativePrefix backend, whose Place has it already), and gives a backend
// without a Place function the zero Place.
func TestPlaceOfProbe(t *testing.T) {
	m := storeurl.NewMux()
	open := func(context.Context, *storeurl.Location) (blob.Store, error) { return mem.New(nil), nil }
	// dir://NAME/DIR: one namespace, the Prefix the path.
	m.Register("dir", storeurl.Backend{Name: "dirs", Open: open, Place: func(loc *storeurl.Location) (storeurl.Place, error) {
		return storeurl.Place{Root: loc.URL.Host, Prefix: loc.URL.Path}, nil
	}})
	// bkt://BUCKET/PREFIX, the prefix native.
	m.Register("bkt", storeurl.Backend{Open: open, NativePrefix: true, Params: []string{"endpoint"},
		Bucket: &storeurl.BucketSyntax{Noun: "bucket", Credentials: "none"},
		Place: func(loc *storeurl.Location) (storeurl.Place, error) {
			return storeurl.BucketPlace(loc, storeurl.Endpoint(loc.Params.Get("endpoint"))), nil
		}})
	// flat://BUCKET/PREFIX, the prefix applied by storeurl.
	m.Register("flat", storeurl.Backend{Open: open, Bucket: &storeurl.BucketSyntax{Noun: "bucket", Credentials: "none"},
		Place: func(loc *storeurl.Location) (storeurl.Place, error) {
			return storeurl.Place{Root: loc.Bucket}, nil
		}})
	m.Register("own", storeurl.Backend{Open: open})
	for raw, want := range map[string]storeurl.Place{
		"dir://h/a/b/":              {Backend: "dirs", Root: "h", Prefix: "a/b"},
		"dir://h/a?prefix=b/c/":     {Backend: "dirs", Root: "h", Prefix: "a/b/c"},
		"dir://h?prefix=b":          {Backend: "dirs", Root: "h", Prefix: "b"},
		"dir://h/?readonly=1":       {Backend: "dirs", Root: "h"},
		"bkt://KB/a?prefix=b":       {Backend: "bkt", Root: "kb@", Prefix: "a/b"},
		"bkt://kb?endpoint=x":       {Backend: "bkt", Root: "kb@x"},
		"flat://kb/a?prefix=b":      {Backend: "flat", Root: "kb", Prefix: "a/b"},
		"own://anything?prefix=a/b": {},
	} {
		got, err := m.PlaceOf(raw)
		if err != nil || got != want {
			t.Errorf("PlaceOf(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"nosuch://x", "dir://h?prefix=..", "bkt://kb?endpoint=a&endpoint=b", "own://?x=1"} {
		_, err := m.PlaceOf(raw)
		if want := m.Check(raw); err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("PlaceOf(%q) = %v; want Check's error %v", raw, err, want)
		}
	}
}

// Endpoint spells one server one way.
func TestEndpoint(t *testing.T) {
	for raw, want := range map[string]string{
		"":                          "",
		"http://127.0.0.1:9000":     "http://127.0.0.1:9000",
		"http://127.0.0.1:9000/":    "http://127.0.0.1:9000",
		"HTTP://Minio.Local:9000//": "http://minio.local:9000",
		"http://127.0.0.1:80":       "http://127.0.0.1",
		"https://s3.example:443/":   "https://s3.example",
		"https://s3.example:80":     "https://s3.example:80",
		"http://[::1]:80/":          "http://[::1]",
		"http://user:pw@127.0.0.1:10000/devstoreaccount1/": "http://127.0.0.1:10000/devstoreaccount1",
		"127.0.0.1:9000/": "127.0.0.1:9000",
		"Minio.Local":     "minio.local",
	} {
		if got := storeurl.Endpoint(raw); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", raw, got, want)
		}
	}
}
