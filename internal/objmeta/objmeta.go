// Package objmeta holds the metadata every object-store backend (S3, GCS,
// Azure Blob) writes with an object: its content type, and a random write
// id that tells an SDK-retried write of ours from a rival's.
//
// The SDKs retry requests, so a conditional write whose first attempt
// landed can come back refused on the retry, its condition failing
// against our own object. A backend stores a fresh write id with every
// object it writes and, when a conditional write is refused, reads the
// object's id: its own id means the write succeeded.
package objmeta

import (
	"crypto/rand"
	"encoding/hex"
	"unicode/utf8"
)

// WriteIDLen is the length of a write id: 128 bits in lowercase hex.
const WriteIDLen = 32

// ContentType returns the Content-Type stored with data:
// "text/plain; charset=utf-8" when data is valid UTF-8 (memory files are
// text), "application/octet-stream" otherwise.
func ContentType(data []byte) string {
	if utf8.Valid(data) {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// NewWriteID returns a random 128-bit write id in lowercase hex (WriteIDLen
// characters). It never fails: crypto/rand.Read crashes the program rather
// than return an error.
func NewWriteID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// IsWriteID reports whether s has the form of a write id: WriteIDLen
// lowercase hex digits.
func IsWriteID(s string) bool {
	if len(s) != WriteIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
