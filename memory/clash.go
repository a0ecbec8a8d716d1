package memory

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
)

// settle makes sure the file key, just written with version, did not make
// a name both a file and a directory: another writer may have created a
// file beneath key, or a file at one of its ancestors, between the survey
// and the write. It looks for both (one List of key's directory, up to its
// first memory file, and one Stat per ancestor); if it finds either, it
// withdraws its own write with a Delete conditional on version and asks
// for a retry, whose survey then finds the other name and reports it.
//
// Two writers that race this way cannot both keep their names: each writes
// before it looks, so the later of the two looks finds the other's write.
// Both may withdraw; then the retry decides (at most Options.Retries times).
// This holds on stores whose listing shows every key written before it; a
// listing that hides keys under an object (MinIO's) defeats the file's look
// beneath itself, and a pair can then stay both (docs/spec.md, "Concurrency").
func (h *Handler) settle(ctx context.Context, c *command, key, version string) (Result, bool) {
	clash, err := h.clashes(ctx, key)
	if err == nil && !clash {
		return textResult(msgCreated(c.path)), false
	}
	// Withdraw even when ctx is done: a name must not stay both.
	wctx := context.WithoutCancel(ctx)
	if derr := h.store.Delete(wctx, key, blob.Cond{IfVersion: version}); derr != nil &&
		!errors.Is(derr, blob.ErrNotExist) && !errors.Is(derr, blob.ErrPrecondition) {
		err = errors.Join(err, fmt.Errorf("memory: withdrawing a create that made %q both a file and a directory: %w", key, derr))
	}
	if err != nil {
		return h.storageFailure(ctx, c, c.path, err), false
	}
	return Result{}, true
}

// clashes reports whether a memory file lies beneath key or a file is at
// one of key's ancestors.
func (h *Handler) clashes(ctx context.Context, key string) (bool, error) {
	if dir, err := h.isDir(ctx, key); err != nil || dir {
		return dir, err
	}
	for i := range len(key) {
		if key[i] != '/' {
			continue
		}
		_, err := h.store.Stat(ctx, key[:i])
		switch {
		case err == nil:
			return true, nil
		case !errors.Is(err, blob.ErrNotExist):
			return false, err
		}
	}
	return false, nil
}
