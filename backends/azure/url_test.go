package azure

import "net/url"

// parseURL parses u as storeurl.Open does before it opens the store.
func parseURL(u *url.URL) (bucket, prefix string, opts *Options, err error) {
	loc, err := backend.Parse(u)
	if err != nil {
		return "", "", nil, err
	}
	return loc.Bucket, loc.Prefix, options(loc), nil
}
