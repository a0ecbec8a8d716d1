package storeurl

import "testing"

// TestParse checks how a configuration string becomes a URL, bare paths in
// particular (the file backend is not importable from this package's tests).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		raw                        string
		scheme, opaque, host, path string
		query                      string
	}{
		{raw: "./memories", scheme: "file", path: "./memories"},
		{raw: "memories", scheme: "file", path: "memories"},
		{raw: "/srv/memories", scheme: "file", path: "/srv/memories"},
		{raw: "./a?b#c", scheme: "file", path: "./a?b#c"},
		{raw: "./a:b", scheme: "file", path: "./a:b"},
		{raw: "/a:b", scheme: "file", path: "/a:b"},
		{raw: "1a:b", scheme: "file", path: "1a:b"},
		{raw: "file:rel/dir", scheme: "file", opaque: "rel/dir"},
		{raw: "file:./rel", scheme: "file", opaque: "./rel"},
		{raw: "file:///srv/m?readonly=1", scheme: "file", path: "/srv/m", query: "readonly=1"},
		{raw: "File://localhost/srv", scheme: "file", host: "localhost", path: "/srv"},
		{raw: "mem://", scheme: "mem"},
		{raw: "s3://bucket/dir?region=eu", scheme: "s3", host: "bucket", path: "/dir", query: "region=eu"},
	} {
		u, err := parse(tc.raw)
		if err != nil {
			t.Errorf("parse(%q): %v", tc.raw, err)
			continue
		}
		if u.Scheme != tc.scheme || u.Opaque != tc.opaque || u.Host != tc.host || u.Path != tc.path || u.RawQuery != tc.query {
			t.Errorf("parse(%q) = scheme %q opaque %q host %q path %q query %q; want %q %q %q %q %q", tc.raw,
				u.Scheme, u.Opaque, u.Host, u.Path, u.RawQuery, tc.scheme, tc.opaque, tc.host, tc.path, tc.query)
		}
	}
}
