package storeurl

import (
	"fmt"
	"net/url"
)

// Without returns rawURL without the parameters of the wrapper registered
// as name, and their values (empty when the URL has none; rawURL then comes
// back unchanged). A bare path (no scheme) has no parameters and comes back
// unchanged. It is for a program that opens the store beneath a layer: the
// encryption layer's Rekey works on the ciphertext (see crypt.PlainURL).
// Errors never repeat the URL, which may hold a password.
func Without(rawURL, name string) (string, url.Values, error) {
	return DefaultMux.Without(rawURL, name)
}

// Without is the package function Without over m's wrappers.
func (m *Mux) Without(rawURL, name string) (string, url.Values, error) {
	w, err := m.wrapper(name)
	if err != nil {
		return "", nil, err
	}
	removed := url.Values{}
	if !hasScheme(rawURL) {
		return rawURL, removed, nil
	}
	u, err := parse(rawURL)
	if err != nil {
		return "", nil, err
	}
	query, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", nil, fmt.Errorf("storeurl: malformed query: %w", err)
	}
	for _, p := range w.Params {
		if v, ok := query[p]; ok {
			removed[p] = v
			delete(query, p)
		}
	}
	if len(removed) == 0 {
		return rawURL, removed, nil
	}
	u.RawQuery = query.Encode()
	return u.String(), removed, nil
}
