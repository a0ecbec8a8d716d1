package memory

import (
	"errors"

	"github.com/cloudmem/cloudmem/blob"
)

// The file limit and the file size limit of a key come from, first to
// last: the Options, the mount that holds the key (its store's
// blob.Limits, set by its URL's max_files and max_file_bytes), the store's
// blob.Limits, the defaults. New resolves all but the mount's.

// maxFilesAt returns the file limit of the scope that holds key (negative:
// none).
func (h *Handler) maxFilesAt(key string) int {
	if m, ok := blob.MountOf(blob.Mounts(h.store), key); ok && !h.filesSet && m.Limits.MaxFiles != 0 {
		return m.Limits.MaxFiles
	}
	return h.maxFiles
}

// expiresAt reports whether files of the scope that holds key expire
// (blob.Traits.Expires): its file count can then fall with no write, so a
// create that the count would refuse recounts first.
func (h *Handler) expiresAt(key string) bool {
	if m, ok := blob.MountOf(blob.Mounts(h.store), key); ok {
		return m.Expires
	}
	return blob.TraitsOf(h.store).Expires
}

// maxFileBytesAt returns the size limit of the file key.
func (h *Handler) maxFileBytesAt(key string) int64 {
	if m, ok := blob.MountOf(blob.Mounts(h.store), key); ok && !h.bytesSet && m.Limits.MaxFileBytes > 0 {
		return m.Limits.MaxFileBytes
	}
	return h.maxFileBytes
}

// readLimit is the Get limit of every command on key: the largest file or
// image a command can use there. No store reads more than one byte beyond
// it.
func (h *Handler) readLimit(key string) int64 { return max(h.maxFileBytesAt(key), h.maxImageBytes) }

// msgTooLargeToRead is the text for an object the store refused to read
// because it is over readLimit (err wraps a *blob.TooLargeError).
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
