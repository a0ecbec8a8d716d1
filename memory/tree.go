package memory

import (
	"context"

	"github.com/cloudmem/cloudmem/blob"
)

// delete removes a file, or when there is no such file the directory with
// every memory file beneath it (gate.Tree.Remove).
func (h *Handler) delete(ctx context.Context, c *command) Result {
	if err := h.gate.Remove(ctx, c.key, blob.Cond{}, true); err != nil {
		return h.fail(ctx, c, err)
	}
	return textResult(msgDeleted(c.path))
}

// remove is Remove's command (api.go): a delete of the file c.path alone,
// at c.ifVersion when that is set, which never retries.
func (h *Handler) remove(ctx context.Context, c *command) Result {
	if err := h.gate.Remove(ctx, c.key, blob.Cond{IfVersion: c.ifVersion}, false); err != nil {
		return h.fail(ctx, c, err)
	}
	return textResult(msgDeleted(c.path))
}

// rename moves a file or a directory (gate.Tree.Move).
func (h *Handler) rename(ctx context.Context, c *command) Result {
	if err := h.gate.Move(ctx, c.key, c.newKey); err != nil {
		return h.fail(ctx, c, err)
	}
	return textResult(msgRenamed(c.oldPath, c.newPath))
}
