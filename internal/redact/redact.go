// Package redact keeps credentials out of error messages.
package redact

import (
	"net/url"
	"strings"
)

// URL returns the URL string s without its user information (user name
// and password), for an error message. A string that does not parse as a
// URL but holds an '@', which may end a password, comes back as
// "(unparsable URL)"; any other string comes back unchanged.
func URL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	if strings.Contains(s, "@") {
		return "(unparsable URL)"
	}
	return s
}
