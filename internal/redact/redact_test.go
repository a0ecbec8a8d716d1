package redact

import "testing"

func TestURL(t *testing.T) {
	for s, want := range map[string]string{
		"http://user:hunter2@host:9000/path?q=1": "http://host:9000/path?q=1",
		"https://user@host":                      "https://host",
		"http://user:hunter2@h:bad:80":           "(unparsable URL)",
		"http://h:bad:80":                        "http://h:bad:80",
		"http://host:9000":                       "http://host:9000",
		"":                                       "",
	} {
		if got := URL(s); got != want {
			t.Errorf("URL(%q) = %q, want %q", s, got, want)
		}
	}
}
