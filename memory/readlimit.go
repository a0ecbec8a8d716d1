package memory

import (
	"errors"

	"github.com/cloudmem/cloudmem/blob"
)

// readLimit is the Get limit of every command: the largest file or image a
// command can use. No store reads more than one byte beyond it.
func (h *Handler) readLimit() int64 { return max(h.maxFileBytes, h.maxImageBytes) }

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
