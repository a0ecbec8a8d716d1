package all_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/cloudmem/cloudmem/backends/all"
	"github.com/cloudmem/cloudmem/storeurl"
)

// PlaceOf reads each backend's place from its URL: every spelling of one
// place gives the same Place, the whole value compared.
func TestPlaceOf(t *testing.T) {
	dir := realTempDir(t)
	t.Chdir(dir)
	abs := filepath.ToSlash(dir)[1:] // without the leading '/'
	file := func(prefix string) storeurl.Place { return storeurl.Place{Backend: "file", Prefix: prefix} }
	for raw, want := range map[string]storeurl.Place{
		dir:                                     file(abs),
		dir + "/":                               file(abs),
		dir + "//":                              file(abs),
		dir + "/./x/../":                        file(abs),
		"file://" + dir:                         file(abs),
		"file://localhost" + dir + "/":          file(abs),
		"file:" + dir + "?readonly=true":        file(abs),
		"./b":                                   file(abs + "/b"),
		"b/c/..":                                file(abs + "/b"),
		"file:b":                                file(abs + "/b"),
		"file:b?prefix=c/":                      file(abs + "/b/c"),
		"file:" + dir + "?prefix=b":             file(abs + "/b"),
		"/":                                     file(""),
		"mem://":                                {},
		"s3://kb":                               {Backend: "s3", Root: "kb@"},
		"s3://kb/a/b/":                          {Backend: "s3", Root: "kb@", Prefix: "a/b"},
		"s3://kb/a?prefix=b&region=eu-west-1":   {Backend: "s3", Root: "kb@", Prefix: "a/b"},
		"s3://kb?endpoint=HTTP://127.0.0.1:80/": {Backend: "s3", Root: "kb@http://127.0.0.1"},
		"s3://kb?endpoint=https://s3.example:9000&path_style=true": {Backend: "s3", Root: "kb@https://s3.example:9000"},
		"gs://kb/a?endpoint=http://127.0.0.1:4443":                 {Backend: "gcs", Root: "kb@http://127.0.0.1:4443", Prefix: "a"},
		"azblob://docs/a?account=Dev":                              {Backend: "azure", Root: "docs@dev@", Prefix: "a"},
		"redis://127.0.0.1":                                        {Backend: "redis", Root: "127.0.0.1:6379/0 {cloudmem}"},
		"rediss://user:pw@127.0.0.1:6379/0?prefix=cloudmem":        {Backend: "redis", Root: "127.0.0.1:6379/0 {cloudmem}"},
		"redis://127.0.0.1:6380/2?prefix=a/b/":                     {Backend: "redis", Root: "127.0.0.1:6380/2 {a/b}"},
		"redis-cluster://H2:7001,h1:7000?prefix=a":                 {Backend: "redis", Root: "cluster h1:7000,h2:7001 {a}"},
	} {
		got, err := storeurl.PlaceOf(raw)
		if err != nil || got != want {
			t.Errorf("PlaceOf(%q) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
}

// Pairs of URLs: whether their stores overlap, by PlaceOf and Overlaps.
func TestPlaceOfOverlaps(t *testing.T) {
	dir := realTempDir(t)
	t.Chdir(dir)
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real", "missing"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		// file
		{dir, dir, true},
		{dir, dir + "/b", true},
		{dir + "/a", dir + "/ab", false},
		{dir + "/a/", dir + "/a//", true},
		{dir + "/a/./b/..", dir + "/a", true},
		{dir + "/a/../b", dir + "/b/c", true},
		{dir + "/a/../b", dir + "/a/b", false},
		{"./a", dir + "/a/b", true},
		{"file:a?prefix=b", dir + "/a/b/c", true},
		{"file:a?prefix=b", dir + "/a/bc", false},
		{dir + "/a", dir + "/A", false},            // case: not caught on a case-insensitive file system
		{dir + "/real", dir + "/link", true},       // a symbolic link and its target
		{dir + "/real/a", dir + "/link/a/b", true}, // beneath them, not there yet
		{dir + "/link/..", dir + "/real", true},    // ".." as text: dir
		{dir + "/real/a", dir + "/link/ab", false},
		{dir + "/dangling/a", dir + "/real/missing/a", false}, // a link whose target is missing: not caught
		{dir + "/a", "file:" + dir + "/a?readonly=true", true},
		// mem: each store is its own
		{"mem://", "mem://", false},
		// buckets
		{"s3://kb?prefix=a", "s3://kb?prefix=a/b", true},
		{"s3://kb/a", "s3://kb?prefix=a/b", true},
		{"s3://kb/a", "s3://kb/ab", false},
		{"s3://kb", "s3://kb/a", true},
		{"s3://kb/a", "s3://kb2/a", false},
		{"s3://kb?endpoint=http://127.0.0.1:9000", "s3://kb?endpoint=http://127.0.0.1:9000/&region=x", true},
		{"s3://kb?endpoint=http://127.0.0.1:9000", "s3://kb?endpoint=http://127.0.0.1:9001", false},
		{"s3://kb?endpoint=http://127.0.0.1:9000", "s3://kb", false}, // an endpoint from the environment: not caught
		{"s3://kb/a", "gs://kb/a", false},
		{"gs://kb/a", "gs://kb/a/b?endpoint=", true},
		{"azblob://docs?account=dev", "azblob://docs/a?account=dev", true},
		{"azblob://docs?account=dev", "azblob://docs/a?account=prod", false},
		// redis: each prefix is a namespace of its own
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1?prefix=cloudmem", true},
		{"redis://127.0.0.1?prefix=a", "redis://127.0.0.1?prefix=a/b", false},
		{"redis://127.0.0.1?prefix=a", "redis://127.0.0.1/1?prefix=a", false},
		{"redis://127.0.0.1?prefix=a", "redis://127.0.0.2?prefix=a", false},
	} {
		a, errA := storeurl.PlaceOf(tc.a)
		b, errB := storeurl.PlaceOf(tc.b)
		if errA != nil || errB != nil {
			t.Errorf("PlaceOf(%q), PlaceOf(%q): %v, %v", tc.a, tc.b, errA, errB)
			continue
		}
		if got := a.Overlaps(b); got != tc.want {
			t.Errorf("%q and %q: overlap %v, want %v (places %+v and %+v)", tc.a, tc.b, got, tc.want, a, b)
		}
	}
}

// PlaceOf fails as Check does, and a backend's own refusal of the URL is
// its error too.
func TestPlaceOfErrors(t *testing.T) {
	for raw, want := range map[string]string{
		"s3://kb?region=a&region=b": `s3: parameter region given 2 times`,
		"file://host/dir":           `file: host "host" in a file URL: only local directories are supported (file:///abs/dir)`,
		"redis://h/x":               `redis: database /x: want a whole number from 0 to 2147483647`,
		"nope://x":                  "",
		"s3://kb?prefix=a/../":      "",
	} {
		_, err := storeurl.PlaceOf(raw)
		if err == nil {
			t.Errorf("PlaceOf(%q): no error", raw)
			continue
		}
		if checkErr := storeurl.Check(raw); want == "" && (checkErr == nil || checkErr.Error() != err.Error()) {
			t.Errorf("PlaceOf(%q) = %v; Check says %v", raw, err, checkErr)
		} else if want != "" && err.Error() != want {
			t.Errorf("PlaceOf(%q) = %v; want %s", raw, err, want)
		}
	}
}

// realTempDir returns a new temporary directory, its symbolic links
// followed (as PlaceOf follows them), for the places a test expects.
func realTempDir(t *testing.T) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// A program that opens several stores side by side (a mount table) refuses
// two that could hold the same objects, before it opens either.
func Example_overlap() {
	urls := []string{"s3://kb?prefix=team", "s3://kb/teams", "s3://kb/team/notes", "mem://", "mem://"}
	places := make([]storeurl.Place, len(urls))
	for i, u := range urls {
		p, err := storeurl.PlaceOf(u)
		if err != nil {
			fmt.Println(err)
			return
		}
		places[i] = p
	}
	for i := range places {
		for j := i + 1; j < len(places); j++ {
			if places[i].Overlaps(places[j]) {
				fmt.Printf("%s and %s overlap\n", urls[i], urls[j])
			}
		}
	}
	// Output:
	// s3://kb?prefix=team and s3://kb/team/notes overlap
}
