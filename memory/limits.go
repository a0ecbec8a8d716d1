package memory

import (
	"errors"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
)

// msgTooLargeToRead is the text for an object the store refused to read
// because it is over the read limit, the larger of the file size limit and
// MaxImageBytes (err wraps a *blob.TooLargeError).
func msgTooLargeToRead(path string, err error) string {
	tl, ok := errors.AsType[*blob.TooLargeError](err)
	if !ok || tl.Size < 0 {
		var limit int64
		if ok {
			limit = tl.Limit
		}
		return "File " + path + " is over the limit of " + itoa64(limit) + " bytes that a memory command reads"
	}
	return "File " + path + " is " + itoa64(tl.Size) + " bytes, over the limit of " + itoa64(tl.Limit) +
		" bytes that a memory command reads"
}

// ReadLimit returns the largest object a Handler over store with the
// default Options reads: the larger of FileBytesLimit(store) and
// DefaultMaxImageBytes. Programs that move memory files past a Handler
// (package transfer) read no more either.
func ReadLimit(store blob.Store) int64 { return max(FileBytesLimit(store), DefaultMaxImageBytes) }

// FileBytesLimit returns the largest memory file a Handler over store with
// the default Options accepts anywhere in it: the store's file size limit
// (blob.Limits, a URL's max_file_bytes; on a mount table the largest of the
// mounts'), else DefaultMaxFileBytes.
func FileBytesLimit(store blob.Store) int64 {
	t := blob.TraitsOf(store)
	files := t.Limits.MaxFileBytes
	if files <= 0 {
		files = DefaultMaxFileBytes
	}
	for _, m := range t.Mounts {
		files = max(files, m.Limits.MaxFileBytes)
	}
	return files
}

// IsBookkeeping reports whether key is an object that a Handler keeps in
// its store for the tree's rules (gate.IsBookkeeping): a file count or a
// witness of a name. Such keys are reserved (blob.IsReserved), so no
// memory path reaches them; this is for tools and tests that read a
// store's raw keys and must tell the Handler's own objects from the other
// layers' (an encryption key, history records).
func IsBookkeeping(key string) bool { return gate.IsBookkeeping(key) }
