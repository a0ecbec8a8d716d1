package blob

import "strings"

// ReservedName is the path segment that belongs to the storage layers' own
// bookkeeping: the encryption layer's key object (".cloudmem/crypt-key"), a
// history journal, a file store's lock file (".cloudmem-lock"). A key with a
// segment equal to ReservedName, or starting with ReservedName+"-", in any
// case, is reserved at every depth: the memory handler refuses paths that would reach
// such a key, and counts none of them as memory files.
//
// To a Store a reserved key is an ordinary key; stores keep their own
// bookkeeping under it.
const ReservedName = ".cloudmem"

// EncryptionKeyName is the key of the encryption layer's key object (package
// crypt). A store that holds it is encrypted: a store opened without
// encryption must refuse it (see RefuseEncrypted).
const EncryptionKeyName = ReservedName + "/crypt-key"

// IsReservedSegment reports whether one path segment is reserved: equal to
// ReservedName or starting with ReservedName+"-", in any case of its ASCII
// letters (a case-insensitive file system keeps ".CLOUDMEM" at
// ".cloudmem").
func IsReservedSegment(seg string) bool {
	n := len(ReservedName)
	return len(seg) >= n && asciiEqualFold(seg[:n], ReservedName) && (len(seg) == n || seg[n] == '-')
}

// asciiEqualFold reports whether a and b are equal but for the case of
// ASCII letters (strings.EqualFold also folds U+212A KELVIN SIGN and
// U+017F LATIN SMALL LETTER LONG S, which a file system does not).
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// IsReserved reports whether any segment of key is reserved (see
// ReservedName). The empty key is not reserved.
func IsReserved(key string) bool {
	for seg := range strings.SplitSeq(key, "/") {
		if IsReservedSegment(seg) {
			return true
		}
	}
	return false
}
