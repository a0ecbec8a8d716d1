package s3

import "net/url"

// parseURL parses u as storeurl.Open does before it opens the store.
func parseURL(u *url.URL) (bucket, prefix string, opts *Options, err error) {
	loc, err := backend.Parse(u)
	if err != nil {
		return "", "", nil, err
	}
	opts, err = options(loc)
	return loc.Bucket, loc.Prefix, opts, err
}
