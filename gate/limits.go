package gate

import "github.com/cloudmem/cloudmem/blob"

// The file limit and the file size limit of a key come from, first to
// last: the Options, the mount that holds the key (its store's
// blob.Limits, set by its URL's max_files and max_file_bytes), the store's
// blob.Limits, the defaults. New resolves all but the mount's.

// maxFilesAt returns the file limit of the scope that holds key (negative:
// none).
func (g *Tree) maxFilesAt(key string) int {
	if m, ok := blob.MountOf(blob.Mounts(g.store), key); ok && !g.filesSet && m.Limits.MaxFiles != 0 {
		return m.Limits.MaxFiles
	}
	return g.maxFiles
}

// expiresAt reports whether files of the scope that holds key expire
// (blob.Traits.Expires): its file count can then fall with no write, so a
// create that the count would refuse recounts first.
func (g *Tree) expiresAt(key string) bool {
	if m, ok := blob.MountOf(blob.Mounts(g.store), key); ok {
		return m.Expires
	}
	return blob.TraitsOf(g.store).Expires
}

// maxFileBytesAt returns the size limit of the file key.
func (g *Tree) maxFileBytesAt(key string) int64 {
	if m, ok := blob.MountOf(blob.Mounts(g.store), key); ok && !g.bytesSet && m.Limits.MaxFileBytes > 0 {
		return m.Limits.MaxFileBytes
	}
	return g.maxFileBytes
}

// readLimit is the Get limit of every read of key: the largest file or
// image an operation can use there. No store reads more than one byte beyond
// it.
func (g *Tree) readLimit(key string) int64 { return max(g.maxFileBytesAt(key), g.maxImageBytes) }

// tooLarge is the refusal of data, to be written at key, when it is over
// the size limit there.
func (g *Tree) tooLarge(key string, data []byte) *Error {
	if n, most := int64(len(data)), g.maxFileBytesAt(key); n > most {
		return &Error{Kind: ErrTooLarge, Key: key, Size: n, Limit: most}
	}
	return nil
}
