package memory

import (
	"context"
	"errors"

	"github.com/cloudmem/cloudmem/blob"
)

// delete removes a file with one Delete, or, when there is no such file, the
// directory with every memory file beneath it (deleteDir: a List, then
// blob.DeleteTree, then a List that proves nothing is left).
func (h *Handler) delete(ctx context.Context, c *command) Result {
	key, res, ok := h.resolve(ctx, c, c.path)
	if !ok {
		return res
	}
	if key == "" {
		return errorResult(ErrRoot, msgDeleteRoot)
	}
	return h.deleteKey(ctx, c, key, blob.Cond{}, true)
}

// remove is Remove's command (api.go): a delete of the file c.path alone,
// at c.ifVersion when that is set, which never retries.
func (h *Handler) remove(ctx context.Context, c *command) Result {
	key, res, ok := h.resolve(ctx, c, c.path)
	if !ok {
		return res
	}
	if key == "" || h.isMountPoint(key) {
		return errorResult(ErrNotFile, msgNotAFile(c.path))
	}
	return h.deleteKey(ctx, c, key, blob.Cond{IfVersion: c.ifVersion}, false)
}

// deleteKey deletes the file key if cond holds, or, when there is no such
// file and dirs is set, the directory key with every memory file beneath
// it, and keeps the file count.
func (h *Handler) deleteKey(ctx context.Context, c *command, key string, cond blob.Cond, dirs bool) Result {
	// A delete does not write the file count (count.go): it reads it, and
	// leaves the file deleted to the next create's write of the count (a
	// credit). A count that a recount left unchanged (Counted) is marked
	// changed before the delete, so that a create refused as full
	// recounts even when the delete stops halfway. The count is read
	// first on a handler's first delete at the scope, or when it
	// remembers the count as Counted. When it remembers the count far
	// from the limit (countsFast) and no delete of a file trusted that
	// version of it yet (countCache.trust), a file's delete does not read
	// it: the remembered token is the credit's, and the Counted mark the
	// read would look for is set only by a recount, which only a create at
	// the limit makes (count.go, "A delete far from the limit"). Otherwise the
	// count is read at the same time as the Delete, and marked after it if
	// another writer recounted meanwhile.
	var (
		count    countRef
		countErr error
		err      error
	)
	maxFiles := h.maxFilesAt(key)
	counted := maxFiles >= 0
	ckey := h.countKey(key)
	readFirst, trusted := false, false
	if counted {
		remembered, ok := h.counts.lookup(ckey)
		readFirst = !ok || remembered.state.Counted
		trusted = !readFirst && countsFast(remembered, maxFiles) && h.counts.trust(remembered)
		if trusted {
			count = remembered
		}
	}
	switch {
	case trusted:
		err = h.store.Delete(ctx, key, cond)
	case readFirst:
		if count, err = h.readCount(ctx, ckey); err != nil {
			return h.storageFailure(ctx, c, c.path, err)
		}
		if count.state.Counted {
			count = h.markChanged(ctx, count)
		}
		err = h.store.Delete(ctx, key, cond)
	default:
		concurrently(
			func() { err = h.store.Delete(ctx, key, cond) },
			func() {
				if counted {
					count, countErr = h.readCount(ctx, ckey)
				}
			},
		)
	}
	if counted && err == nil && countErr == nil && count.exists && !blob.TraitsOf(h.store).DeletesMayRepeat {
		h.counts.addCredit(ckey, count.state.Token) // the next create takes the file off
	}
	if trusted && errors.Is(err, blob.ErrNotExist) {
		h.counts.untrust(count) // no file deleted: the next file delete may trust it
	}
	triedDir := false
	if errors.Is(err, blob.ErrNotExist) && dirs {
		err = h.deleteDir(ctx, key) // a directory, or nothing
		triedDir = true
	}
	if counted && !readFirst && !errors.Is(err, blob.ErrNotExist) {
		if countErr != nil || trusted && triedDir { // the count's state is not known: read it
			count, countErr = h.readCount(context.WithoutCancel(ctx), ckey)
		}
		switch {
		case countErr != nil:
			h.countFailed(ctx, countErr)
		case count.state.Counted: // recounted by another writer meanwhile
			h.markChanged(context.WithoutCancel(ctx), count)
		}
	}
	if errors.Is(err, blob.ErrNotExist) && !dirs {
		isDir, derr := h.isDir(ctx, key)
		switch {
		case derr != nil:
			err = derr
		case isDir:
			return errorResult(ErrNotFile, msgNotAFile(c.path))
		}
	}
	switch {
	case errors.Is(err, blob.ErrNotExist):
		return errorResult(ErrNotFound, msgNotExist(c.path))
	case errors.Is(err, blob.ErrPrecondition):
		return failedResult(&Error{Kind: ErrConflict, Msg: msgConflict(c.path), Cause: err})
	case err != nil:
		return h.storageFailure(ctx, c, c.path, err)
	}
	return textResult(msgDeleted(c.path))
}

// rename moves a file or a directory through blob.Rename, which is atomic on
// stores with blob.Tree and otherwise copies before it deletes, so that
// every file is always at its old path, its new path or both.
//
// docs/spec.md orders the checks: root, old path missing, destination exists,
// into itself, an ancestor of the destination is a file. When the new path's
// parent is the old path's parent or one of its ancestors (and the new path
// is not inside the old one), the old path's existence proves that parent is
// a directory, and blob.Rename itself reports the two remaining failures in
// that order. Elsewhere, on a store that keeps a name from being both a file
// and a directory (blob.Traits.ExclusiveNames), the move itself refuses
// every failure the checks look for and changes nothing, so the checks are
// made only after a refusal, to word it. Otherwise, and whenever a write
// policy may scan the move (a check that comes after rename's own:
// screenMove), they are made first, with Stat and List.
func (h *Handler) rename(ctx context.Context, c *command) Result {
	oldKey, res, ok := h.resolve(ctx, c, c.oldPath)
	if !ok {
		return res
	}
	newKey, res, ok := h.resolve(ctx, c, c.newPath)
	if !ok {
		return res
	}
	if oldKey == "" {
		return errorResult(ErrRoot, msgRenameRoot)
	}
	apart := newKey != "" && newKey != oldKey && !within(newKey, oldKey)
	known := apart && (parent(newKey) == "" || within(oldKey, parent(newKey)))
	checkAfter := apart && !known && !h.policies.active && blob.TraitsOf(h.store).ExclusiveNames
	if h.policies.active || !known && !checkAfter { // a policy's scan comes after these checks
		if res, ok := h.checkRename(ctx, c, oldKey, newKey); !ok {
			return res
		}
	}
	if res, ok := h.screenMove(ctx, c, oldKey, newKey); !ok {
		return res
	}
	err := h.move(ctx, oldKey, newKey)
	if checkAfter && (errors.Is(err, blob.ErrNotExist) || errors.Is(err, blob.ErrPrecondition)) {
		// Refused, and nothing moved: the checks say which failure comes
		// first in SPEC's order (should they all pass now, a rival changed
		// the tree meanwhile, and err is worded below).
		if res, ok := h.checkRename(ctx, c, oldKey, newKey); !ok {
			return res
		}
	}
	// A move across two counted scopes (two mounts) that may have copied
	// files adds them to the new scope behind its count, which is
	// forgotten so that its next create recounts (count.go); the old
	// scope's count is left too high, and marked changed.
	if h.countPrefix(oldKey) != h.countPrefix(newKey) &&
		!errors.Is(err, blob.ErrNotExist) && !errors.Is(err, blob.ErrPrecondition) {
		if h.maxFilesAt(newKey) >= 0 {
			h.forget(ctx, h.countKey(newKey))
		}
		if h.maxFilesAt(oldKey) >= 0 {
			if from, err := h.readCount(ctx, h.countKey(oldKey)); err == nil {
				_ = h.markChanged(ctx, from)
			}
		}
	}
	switch {
	case err == nil:
		return textResult(msgRenamed(c.oldPath, c.newPath))
	case errors.Is(err, blob.ErrNotExist):
		return errorResult(ErrNotFound, msgNotExist(c.oldPath))
	case errors.Is(err, blob.ErrPrecondition):
		return errorResult(ErrExists, msgDestExists(c.newPath))
	case errors.Is(err, blob.ErrTooLarge):
		path := c.oldPath
		if tl, ok := errors.AsType[*blob.TooLargeError](err); ok && tl.Key != oldKey {
			path = PathOf(tl.Key) // a file of the directory
		}
		return errorResult(ErrTooLarge, msgTooLargeToRead(path, err))
	}
	return h.storageFailure(ctx, c, c.oldPath, err)
}

// checkRename makes rename's checks in docs/spec.md's order with explicit probes.
// It returns ok == false and the Result to return on the first that fails.
func (h *Handler) checkRename(ctx context.Context, c *command, oldKey, newKey string) (Result, bool) {
	oldFile, oldDir, err := h.exists(ctx, oldKey)
	switch {
	case err != nil:
		return h.storageFailure(ctx, c, c.oldPath, err), false
	case !oldFile && !oldDir:
		return errorResult(ErrNotFound, msgNotExist(c.oldPath)), false
	}
	newFile, newDir, err := h.exists(ctx, newKey)
	// A directory moved onto a directory is left to move: it completes a
	// move that was interrupted, and otherwise refuses as here.
	resume := oldDir && !oldFile && newDir && !newFile && newKey != "" && newKey != oldKey && !within(newKey, oldKey)
	switch {
	case err != nil:
		return h.storageFailure(ctx, c, c.oldPath, err), false
	case (newFile || newDir) && !resume:
		return errorResult(ErrExists, msgDestExists(c.newPath)), false
	case within(newKey, oldKey):
		return errorResult(ErrIntoItself, msgIntoItself(c.oldPath, c.newPath)), false
	}
	// The old path's ancestors are directories since it exists; any other
	// ancestor of the new path must not be a file. One with keys beneath it
	// is a directory, and Stat finds it missing, which is fine.
	for i := range len(newKey) {
		if newKey[i] != '/' || within(oldKey, newKey[:i]) {
			continue
		}
		dir := newKey[:i]
		_, err := h.store.Stat(ctx, dir)
		switch {
		case err == nil:
			return errorResult(ErrNotDir, msgAncestorFile(dir)), false
		case !errors.Is(err, blob.ErrNotExist):
			return h.storageFailure(ctx, c, c.oldPath, err), false
		}
	}
	return Result{}, true
}

// exists reports whether key is a file or a directory (the root is one):
// one Stat, and when there is no such file, one List of its first key
// beneath.
func (h *Handler) exists(ctx context.Context, key string) (file, dir bool, err error) {
	if key == "" {
		return false, true, nil
	}
	_, err = h.store.Stat(ctx, key)
	switch {
	case err == nil:
		return true, false, nil
	case !errors.Is(err, blob.ErrNotExist):
		return false, false, err
	}
	dir, err = h.isDir(ctx, key)
	return false, dir, err
}
