package s3

import (
	"strings"

	"github.com/cloudmem/cloudmem/internal/objmeta"
)

// metaWriteID is the user metadata key (header x-amz-meta-cloudmem-write)
// holding the random id of the Put that wrote the object.
const metaWriteID = "cloudmem-write"

// versionSep separates the ETag from the write id in a version. It cannot
// appear in a write id, so the last one in a version is the separator.
const versionSep = "#"

// joinVersion returns the version of an object with this ETag and write id:
// "ETAG#ID", or the ETag alone when id is not a write id (objects written by
// other programs, and listings, which carry no metadata).
func joinVersion(etag, id string) string {
	if !objmeta.IsWriteID(id) {
		return etag
	}
	return etag + versionSep + id
}

// splitVersion undoes joinVersion; id is "" for a version without one.
func splitVersion(v string) (etag, id string) {
	i := strings.LastIndex(v, versionSep)
	if i < 0 || !objmeta.IsWriteID(v[i+1:]) {
		return v, ""
	}
	return v[:i], v[i+1:]
}

// writeIDOf returns the write id in version v, or "".
func writeIDOf(v string) string {
	_, id := splitVersion(v)
	return id
}

// versionMatches reports whether a caller's version want names the object
// whose current version is cur. A version without a write id (from List)
// matches on the ETag alone.
func versionMatches(want, cur string) bool {
	wantTag, wantID := splitVersion(want)
	if wantID == "" {
		curTag, _ := splitVersion(cur)
		return wantTag == curTag
	}
	return want == cur
}

// metaValue looks name up in user metadata, whose keys the SDK may return
// in any case.
func metaValue(meta map[string]string, name string) string {
	if v, ok := meta[name]; ok {
		return v
	}
	for k, v := range meta {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
