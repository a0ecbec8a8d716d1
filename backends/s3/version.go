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
// other programs, and listings, which carry no metadata). The ETag is
// spelled without the quotes S3 sends it in (0b2d..., not "0b2d..."), like
// the Azure store's versions: a version is shown to people (ls --json) and
// handed back by programs, and quotes inside it would have to be escaped
// everywhere it goes.
func joinVersion(etag, id string) string {
	etag = unquoteETag(etag)
	if !objmeta.IsWriteID(id) {
		return etag
	}
	return etag + versionSep + id
}

// splitVersion undoes joinVersion; id is "" for a version without one. The
// ETag comes back without quotes even when v has them: versions that
// stores of earlier releases returned (kept in sync state files, in
// callers' hands) still name the same object.
func splitVersion(v string) (etag, id string) {
	i := strings.LastIndex(v, versionSep)
	if i < 0 || !objmeta.IsWriteID(v[i+1:]) {
		return unquoteETag(v), ""
	}
	return unquoteETag(v[:i]), v[i+1:]
}

// unquoteETag returns an ETag without the double quotes of its HTTP form.
func unquoteETag(etag string) string {
	if len(etag) >= 2 && etag[0] == '"' && etag[len(etag)-1] == '"' {
		return etag[1 : len(etag)-1]
	}
	return etag
}

// quoteETag returns the HTTP form of an ETag, as If-Match and the other
// conditions that name one want it.
func quoteETag(etag string) string { return `"` + etag + `"` }

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
	curTag, curID := splitVersion(cur)
	return wantTag == curTag && (wantID == "" || wantID == curID)
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
