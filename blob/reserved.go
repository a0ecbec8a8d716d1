package blob

import "strings"

// ReservedName is the path segment that belongs to the storage layers' own
// bookkeeping: the encryption layer's key object (".cloudmem/crypt-key"), a
// history journal, a file store's lock file (".cloudmem-lock"). A key with a
// segment equal to ReservedName, or starting with ReservedName+"-", is
// reserved at every depth: the memory handler refuses paths that would reach
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
// ReservedName or starting with ReservedName+"-".
func IsReservedSegment(seg string) bool {
	return seg == ReservedName || strings.HasPrefix(seg, ReservedName+"-")
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
