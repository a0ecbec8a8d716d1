package gate

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cloudmem/cloudmem/blob"
)

// deleteKey deletes the file key if cond holds, or, when there is no such
// file and dirs is set, the directory key with every memory file beneath
// it, and keeps the file count.
func (g *Tree) deleteKey(ctx context.Context, key string, cond blob.Cond, dirs bool) error {
	// A delete does not write the file count (count.go): it reads it, and
	// leaves the file deleted to the next create's write of the count (a
	// credit). A count that a recount left unchanged (Counted) is marked
	// changed before the delete, so that a create refused as full
	// recounts even when the delete stops halfway. The count is read
	// first on a Tree's first delete at the scope, or when it
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
	maxFiles := g.maxFilesAt(key)
	counted := maxFiles >= 0
	ckey := g.countKey(key)
	readFirst, trusted := false, false
	if counted {
		remembered, ok := g.counts.lookup(ckey)
		readFirst = !ok || remembered.state.Counted
		trusted = !readFirst && countsFast(remembered, maxFiles) && g.counts.trust(remembered)
		if trusted {
			count = remembered
		}
	}
	switch {
	case trusted:
		err = g.store.Delete(ctx, key, cond)
	case readFirst:
		if count, err = g.readCount(ctx, ckey); err != nil {
			return err
		}
		if count.state.Counted {
			count = g.markChanged(ctx, count)
		}
		err = g.store.Delete(ctx, key, cond)
	default:
		concurrently(
			func() { err = g.store.Delete(ctx, key, cond) },
			func() {
				if counted {
					count, countErr = g.readCount(ctx, ckey)
				}
			},
		)
	}
	if counted && err == nil && countErr == nil && count.exists && !blob.TraitsOf(g.store).DeletesMayRepeat {
		g.counts.addCredit(ckey, count.state.Token) // the next create takes the file off
	}
	if trusted && errors.Is(err, blob.ErrNotExist) {
		g.counts.untrust(count) // no file deleted: the next file delete may trust it
	}
	triedDir := false
	if errors.Is(err, blob.ErrNotExist) && dirs {
		err = g.deleteDir(ctx, key) // a directory, or nothing
		triedDir = true
	}
	if counted && !readFirst && !errors.Is(err, blob.ErrNotExist) {
		if countErr != nil || trusted && triedDir { // the count's state is not known: read it
			count, countErr = g.readCount(context.WithoutCancel(ctx), ckey)
		}
		switch {
		case countErr != nil:
			g.countFailed(ctx, countErr)
		case count.state.Counted: // recounted by another writer meanwhile
			g.markChanged(context.WithoutCancel(ctx), count)
		}
	}
	if errors.Is(err, blob.ErrNotExist) && !dirs {
		isDir, derr := g.isDir(ctx, key)
		switch {
		case derr != nil:
			err = derr
		case isDir:
			return refuse(ErrNotFile, key)
		}
	}
	switch {
	case errors.Is(err, blob.ErrNotExist):
		return refuse(ErrNotFound, key)
	case errors.Is(err, blob.ErrPrecondition):
		return &Error{Kind: ErrConflict, Key: key, Err: err}
	}
	return err
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
// screenMove), they are made first, with Stat and List. Once the move has
// written, it looks for a create that raced it (settleMove); on a clash it
// is undone, and the checks, made again, word the refusal, or, when they
// pass (the create withdrew too), the move is made again (Options.Retries).
func (g *Tree) rename(ctx context.Context, oldKey, newKey string) error {
	apart := newKey != "" && newKey != oldKey && !within(newKey, oldKey)
	known := apart && (parent(newKey) == "" || within(oldKey, parent(newKey)))
	// A move into another mount brings files under its limits, which are
	// checked after the checks of rename: their sizes, then their number
	// (they are reserved in its count first).
	across := g.countPrefix(oldKey) != g.countPrefix(newKey)
	checkAfter := apart && !known && !across && !g.policies.active && blob.TraitsOf(g.store).ExclusiveNames
	if g.policies.active || across || !known && !checkAfter { // a policy's scan comes after these checks
		if err := g.checkRename(ctx, oldKey, newKey); err != nil {
			return err
		}
	}
	if err := g.screenMove(ctx, oldKey, newKey); err != nil {
		return err
	}
	var r reservation
	if across {
		keys, err := g.incoming(ctx, oldKey, newKey)
		if err != nil {
			return err
		}
		if r, err = g.reserveMove(ctx, keys, newKey); err != nil {
			return err
		}
	}
	var err error
	if lost := g.retry(ctx, newKey, func() bool {
		err = g.move(ctx, oldKey, newKey)
		if !errors.Is(err, errMoveRaced) {
			return false
		}
		// Nothing moved. The checks say what the create that raced the
		// move left; when they pass, it withdrew too: move again.
		err = g.checkRename(ctx, oldKey, newKey)
		return err == nil
	}); lost != nil {
		err = lost
	}
	if r.key != "" {
		g.settleReservation(ctx, r, err)
	}
	if _, ok := errors.AsType[*Error](err); ok {
		return err // refused by the checks after a race: nothing moved
	}
	if checkAfter && (errors.Is(err, blob.ErrNotExist) || errors.Is(err, blob.ErrPrecondition)) {
		// Refused, and nothing moved: the checks say which failure comes
		// first in SPEC's order (should they all pass now, a rival changed
		// the tree meanwhile, and err is worded below).
		if err := g.checkRename(ctx, oldKey, newKey); err != nil {
			return err
		}
	}
	// A move across two counted scopes (two mounts) that may have copied
	// files took them out of the old scope: its count is left too high,
	// and marked changed. The new scope's count holds them (reserveMove).
	if g.countPrefix(oldKey) != g.countPrefix(newKey) &&
		!errors.Is(err, blob.ErrNotExist) && !errors.Is(err, blob.ErrPrecondition) {
		if g.maxFilesAt(oldKey) >= 0 {
			if from, err := g.readCount(ctx, g.countKey(oldKey)); err == nil {
				_ = g.markChanged(ctx, from)
			}
		}
	}
	switch {
	case errors.Is(err, blob.ErrNotExist):
		return refuse(ErrNotFound, oldKey)
	case errors.Is(err, blob.ErrPrecondition):
		return refuse(ErrExists, newKey)
	case errors.Is(err, blob.ErrTooLarge):
		return tooLargeToRead(oldKey, err)
	}
	return err
}

// incoming returns the new keys of the files that a move of oldKey to
// newKey, in another mount, brings there, but for copies that an
// interrupted move of the same source left there (which that mount's
// listing counts already). A file over the new mount's size limit refuses
// the move (ErrTooLarge about its new key) before anything moves.
func (g *Tree) incoming(ctx context.Context, oldKey, newKey string) ([]string, error) {
	var files []blob.Info
	info, err := g.store.Stat(ctx, oldKey)
	dir := errors.Is(err, blob.ErrNotExist)
	switch {
	case err == nil:
		files = []blob.Info{info}
	case !dir:
		return nil, err
	default:
		for info, err := range g.List(ctx, oldKey+"/") {
			if err != nil {
				return nil, err
			}
			files = append(files, info)
		}
	}
	there := map[string]bool{}
	if dir {
		for info, err := range g.List(ctx, newKey+"/") {
			if err != nil {
				return nil, err
			}
			there[info.Key] = true
		}
	}
	var keys []string
	for _, f := range files {
		k := newKey + f.Key[len(oldKey):]
		// A file over the read limit where it is (put there by another
		// program) is refused by the move itself, with the read's text
		// (docs/spec.md "rename").
		if most := g.maxFileBytesAt(k); f.Size > most && f.Size <= g.readLimit(f.Key) {
			return nil, &Error{Kind: ErrTooLarge, Key: k, Size: f.Size, Limit: most}
		}
		if !there[k] {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// reserveMove reserves the files keys, which a move brings into the mount
// of newKey (incoming), in that mount's file count, as a create near the
// limit does; a mount without a file limit, or no keys, reserve nothing. A
// move that would take the mount over its limit is refused (ErrFull: Size
// the files the mount holds) before anything moves. The reservation must
// be settled once the move is done (settleReservation). Like a create's, it
// assumes that the move writes its files within pendingTTL/2 of reserving
// them; a recount after that may leave out the files still to come.
func (g *Tree) reserveMove(ctx context.Context, keys []string, newKey string) (reservation, error) {
	maxFiles := g.maxFilesAt(newKey)
	if maxFiles < 0 || len(keys) == 0 {
		return reservation{}, nil
	}
	r, full, err := g.reserve(ctx, keys, maxFiles, nil)
	switch {
	case errors.Is(err, errCountBusy):
		return reservation{}, &Error{Kind: ErrConflict, Key: newKey, Err: err}
	case err != nil:
		return reservation{}, err
	case full >= 0:
		return reservation{}, &Error{Kind: ErrFull, Key: newKey, Size: int64(full), Limit: int64(maxFiles)}
	}
	return r, nil
}

// settleReservation settles the reservation r of a move that ended with
// err: a move done takes its entries off the pending list (the count
// keeps its files); a move that moved nothing (refused, or its source or
// destination changed before it wrote) gives them back; after any other
// failure, which may have moved some files, the reservation stays: the
// count is then too high, which is safe, and a recount drops the entries.
func (g *Tree) settleReservation(ctx context.Context, r reservation, err error) {
	_, refused := errors.AsType[*Error](err)
	switch {
	case err == nil:
		if err := g.confirm(context.WithoutCancel(ctx), r); err != nil {
			g.log.LogAttrs(ctx, slog.LevelWarn, "gate: a move's reservation stays on the file count's pending list",
				slog.Any("error", err))
		}
	case refused, errors.Is(err, blob.ErrNotExist), errors.Is(err, blob.ErrPrecondition), errors.Is(err, blob.ErrTooLarge):
		g.release(context.WithoutCancel(ctx), r)
	}
}

// checkRename makes rename's checks in docs/spec.md's order with explicit probes.
// It returns the first that fails.
func (g *Tree) checkRename(ctx context.Context, oldKey, newKey string) error {
	oldFile, oldDir, err := g.exists(ctx, oldKey)
	switch {
	case err != nil:
		return err
	case !oldFile && !oldDir:
		return refuse(ErrNotFound, oldKey)
	}
	newFile, newDir, err := g.exists(ctx, newKey)
	// A directory moved onto a directory is left to move: it completes a
	// move that was interrupted, and otherwise refuses as here.
	resume := oldDir && !oldFile && newDir && !newFile && newKey != "" && newKey != oldKey && !within(newKey, oldKey)
	switch {
	case err != nil:
		return err
	case (newFile || newDir) && !resume:
		return refuse(ErrExists, newKey)
	case within(newKey, oldKey):
		return refuse(ErrIntoItself, newKey)
	}
	// The old path's ancestors are directories since it exists; any other
	// ancestor of the new path must not be a file. One with keys beneath it
	// is a directory, and Stat finds it missing, which is fine.
	for i := range len(newKey) {
		if newKey[i] != '/' || within(oldKey, newKey[:i]) {
			continue
		}
		dir := newKey[:i]
		_, err := g.store.Stat(ctx, dir)
		switch {
		case err == nil:
			return refuse(ErrNotDir, dir)
		case !errors.Is(err, blob.ErrNotExist):
			return err
		}
	}
	return nil
}

// exists reports whether key is a file or a directory (the root is one):
// one Stat, and when there is no such file, one List of its first key
// beneath.
func (g *Tree) exists(ctx context.Context, key string) (file, dir bool, err error) {
	if key == "" {
		return false, true, nil
	}
	_, err = g.store.Stat(ctx, key)
	switch {
	case err == nil:
		return true, false, nil
	case !errors.Is(err, blob.ErrNotExist):
		return false, false, err
	}
	dir, err = g.isDir(ctx, key)
	return false, dir, err
}
