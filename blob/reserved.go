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
// ReservedName or starting with ReservedName+"-", in any case of its
// letters as EqualFold compares them (a case-insensitive file system keeps
// ".CLOUDMEM" at ".cloudmem"). No rune outside ASCII folds to a byte of
// ReservedName+"-" (TestNoLookAlikeOfTheReservedName), so a reserved
// segment starts with as many bytes as ReservedName.
func IsReservedSegment(seg string) bool {
	n := len(ReservedName)
	return len(seg) >= n && EqualFold(seg[:n], ReservedName) && (len(seg) == n || seg[n] == '-')
}

// EqualFold reports whether a and b (keys, segments, or parts of them) are
// one name to cloudmem's reserved names: equal under Unicode case folding,
// as strings.EqualFold compares. It is the one rule by which every layer
// matches a reserved name in another case (IsReservedSegment, the file
// store's own names, the encryption layer's key object), so that no layer
// takes for an ordinary key a name another keeps for itself. It folds more
// than ASCII letters on purpose: U+212A KELVIN SIGN is k, and U+017F LATIN
// SMALL LETTER LONG S is s. macOS's case-insensitive APFS, which also
// ignores Unicode normalization, keeps "crypt-\u212aey" at "crypt-key"
// (the Kelvin sign is a canonical equivalent of K); refusing such a
// look-alike costs nothing, and taking it for an ordinary key could
// overwrite the name it looks like.
func EqualFold(a, b string) bool { return strings.EqualFold(a, b) }

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
