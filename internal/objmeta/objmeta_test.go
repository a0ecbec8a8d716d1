package objmeta

import "testing"

func TestContentType(t *testing.T) {
	for data, want := range map[string]string{
		"":                  "text/plain; charset=utf-8",
		"# Notes\n日本語\r\n":  "text/plain; charset=utf-8",
		"\x89PNG\r\n\x1a\n": "application/octet-stream",
		"caf\xe9":           "application/octet-stream",
	} {
		if got := ContentType([]byte(data)); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", data, got, want)
		}
	}
}

func TestNewWriteID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewWriteID()
		if !IsWriteID(id) {
			t.Fatalf("NewWriteID() = %q, which IsWriteID refuses", id)
		}
		if seen[id] {
			t.Fatalf("NewWriteID() returned %q twice", id)
		}
		seen[id] = true
	}
}

func TestIsWriteID(t *testing.T) {
	for s, want := range map[string]bool{
		"0123456789abcdef0123456789abcdef":  true,
		"0123456789ABCDEF0123456789abcdef":  false, // upper case
		"0123456789abcdef0123456789abcde":   false, // 31 characters
		"0123456789abcdef0123456789abcdef0": false, // 33 characters
		"0123456789abcdef0123456789abcdeg":  false,
		"":                                  false,
	} {
		if got := IsWriteID(s); got != want {
			t.Errorf("IsWriteID(%q) = %t, want %t", s, got, want)
		}
	}
}
