package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cloudmem/cloudmem/blob"
)

// Directory delete and move, checked afterwards.
//
// A store's listing may hide keys: on some object stores a name that is
// both an object and a prefix ("t/a" and "t/a/b", left by another tool or
// by an old race) lists only the object, and the keys beneath it appear
// once it is gone. So a directory delete or a copy-based move lists the
// directory again when it is done, and deals with what is still there, a
// bounded number of rounds. It never reports success while a key it was
// to delete or move is still under the old name.

// sweepRounds bounds how often a directory delete or move lists the old
// directory again and deals with what remains.
const sweepRounds = 8

// errLeftBehind is the failure of a delete or move that kept finding keys
// under the old directory.
var errLeftBehind = errors.New("gate: keys remain under the directory after every round of the operation")

// deleteDir deletes every memory file under the directory key. Reserved
// bookkeeping keys beneath it (another store's, under a longer prefix) are
// no memory files and stay. It returns blob.ErrNotExist when no memory file
// lies under key.
func (g *Tree) deleteDir(ctx context.Context, key string) error {
	for round := range sweepRounds + 1 {
		infos, reserved, err := g.listDir(ctx, key)
		switch {
		case err != nil:
			return err
		case len(infos) == 0 && round == 0:
			return fmt.Errorf("%q: %w", key, blob.ErrNotExist)
		case len(infos) == 0:
			return nil
		case round == sweepRounds:
			return fmt.Errorf("%w: %d under %q", errLeftBehind, len(infos), key)
		}
		if round == 0 && reserved == 0 {
			err := blob.DeleteTree(ctx, g.store, key)
			if err != nil && !errors.Is(err, blob.ErrNotExist) {
				return err
			}
			continue
		}
		// One by one: blob.DeleteKeys batches them on a store that can, and
		// otherwise makes up to blob.DeleteParallel Deletes at once.
		if err := blob.DeleteKeys(ctx, g.store, blob.Keys(infos)); err != nil {
			return err
		}
	}
	return nil // not reached
}

// listDir lists the memory files under the directory key, and counts the
// reserved keys there.
func (g *Tree) listDir(ctx context.Context, key string) (infos []blob.Info, reserved int, err error) {
	for info, err := range g.store.List(ctx, key+"/") {
		if err != nil {
			return nil, 0, err
		}
		if blob.IsReserved(info.Key) {
			reserved++
			continue
		}
		infos = append(infos, info)
	}
	return infos, reserved, nil
}

// move moves the file or directory src to dst, with the errors of
// blob.Tree (ErrNotExist, ErrPrecondition for an existing destination).
// A store's atomic Rename is used when it has one; otherwise moveByCopy.
func (g *Tree) move(ctx context.Context, src, dst string) error {
	if src == "" || dst == "" || dst == src || within(dst, src) { // the checks exclude these
		return fmt.Errorf("%w: cannot move %q to %q", blob.ErrInvalidKey, src, dst)
	}
	if r, ok := g.store.(blob.Tree); ok {
		err := r.Rename(ctx, src, dst)
		if err == nil {
			// A create that raced the move: put everything back.
			err = g.settleMove(ctx, src, dst, movedUnknown, func(ctx context.Context) error { return r.Rename(ctx, dst, src) })
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	return g.moveByCopy(ctx, src, dst)
}

// errMoveRaced is the failure of a move that found, once it had written its
// destination, that a create had made a name there both a file and a
// directory meanwhile: the move was undone, and nothing moved.
var errMoveRaced = errors.New("gate: move: a create of a clashing name raced the move; it was undone")

// settleMove is settle for a move of src that has just written its
// destination dst (renamed it there, or copied every file there and deleted
// no source yet): a create may have made a name clash with it between the
// move's checks and its write, as create's own look (settle) cannot see a
// write that lands after it. So the move too looks after it writes: the
// name dst must not be both a file and a directory, and no ancestor of dst
// (but src's own, which hold src) may be a file (moveClashes, told what
// moved). Then of a create and a
// move that race this way at most one keeps its name, since each looks
// after its write. On a clash, or when a look fails, undo puts the move
// back (under a context that is never done) and settleMove returns
// errMoveRaced, or the look's failure. A store that keeps names exclusive
// (blob.Traits.ExclusiveNames) refused the clash itself: no look. On a
// store whose listing hides keys under an object (blob.Traits.HidesUnderObjects)
// a file moved to dst does not see a file created beneath it (as
// settleHidden says, a rename racing a create is not covered there).
func (g *Tree) settleMove(ctx context.Context, src, dst string, what moved, undo func(context.Context) error) error {
	if blob.TraitsOf(g.store).ExclusiveNames {
		return nil
	}
	clash, err := g.moveClashes(ctx, src, dst, what)
	if err == nil && !clash {
		return nil
	}
	if err == nil {
		err = errMoveRaced
	}
	if uerr := undo(context.WithoutCancel(ctx)); uerr != nil {
		return errors.Join(err, fmt.Errorf("gate: move: undoing the move of %q to %q: %w", src, dst, uerr))
	}
	return err
}

// What a move moved, as far as it knows: settleMove's look depends on it.
type moved int

const (
	movedUnknown moved = iota // an atomic Rename: a file or a directory
	movedFile
	movedDir
)

// moveClashes reports whether dst, just written by a move of src (what),
// is both a file and a directory, or has a file at one of its ancestors
// that are not src's. The looks are made at once: a Stat of each such
// ancestor, and a List of dst's directory up to its first memory file for
// a file moved there, a Stat of dst for a directory; when the move does
// not know which it moved, a Stat of dst, and then the List if it is a
// file.
func (g *Tree) moveClashes(ctx context.Context, src, dst string, what moved) (bool, error) {
	var anc []string
	for _, a := range ancestors(dst) {
		if !within(src, a) {
			anc = append(anc, a)
		}
	}
	isFile := make([]bool, len(anc))
	var dstFile, dstDir bool
	stat := func(key string) (bool, error) {
		_, err := g.store.Stat(ctx, key)
		if err == nil || errors.Is(err, blob.ErrNotExist) {
			return err == nil, nil
		}
		return false, err
	}
	err := parallel(ctx, len(anc)+1, false, func(i int) error {
		var err error
		switch {
		case i < len(anc):
			isFile[i], err = stat(anc[i])
		case what == movedFile:
			dstFile = true
			dstDir, err = g.IsDir(ctx, dst)
		case what == movedDir:
			dstFile, err = stat(dst)
			dstDir = true
		default:
			if dstFile, err = stat(dst); err == nil && dstFile {
				dstDir, err = g.IsDir(ctx, dst)
			}
		}
		return err
	})
	if slices.Contains(isFile, true) || dstFile && dstDir {
		return true, nil
	}
	return false, err
}

// moveByCopy moves src to dst with the core methods: each object is copied
// with Put(IfAbsent), then its source is deleted with Delete(IfVersion),
// so that every file is always at its old key, its new key or both, and a
// source rewritten meanwhile carries its new content over. If a copy
// fails, the copies made so far are removed.
//
// A directory whose destination already holds exactly copies of its files
// (the same relative keys and content, as an interrupted move of the same
// source leaves them) is moved into it: the move completes instead of
// failing. Afterwards the source directory is listed again until nothing
// is left (see sweepRounds).
func (g *Tree) moveByCopy(ctx context.Context, src, dst string) error {
	ctx = blob.WithMove(ctx, src, dst)
	data, info, err := g.store.Get(ctx, src, g.readLimit(src))
	switch {
	case err == nil: // a file
		if err := g.absentTree(ctx, dst); err != nil {
			return err
		}
		return g.copyAll(ctx, []blob.Info{info}, map[string][]byte{src: data}, nil, src, dst)
	case !errors.Is(err, blob.ErrNotExist):
		return err
	}
	infos, err := blob.ListAll(ctx, g.store, src+"/")
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		return fmt.Errorf("%q: %w", src, blob.ErrNotExist)
	}
	// No operation reads more than the read limit: a directory holding an
	// object over it (put there by another program) is not moved, and
	// nothing is copied.
	for _, info := range infos {
		if limit := g.readLimit(info.Key); info.Size > limit {
			return &blob.TooLargeError{Key: info.Key, Size: info.Size, Limit: limit}
		}
	}
	if _, err := g.store.Stat(ctx, dst); err == nil {
		return fmt.Errorf("%q: %w: destination exists", dst, blob.ErrPrecondition)
	} else if !errors.Is(err, blob.ErrNotExist) {
		return err
	}
	existing, err := blob.ListAll(ctx, g.store, dst+"/")
	if err != nil {
		return err
	}
	var copies map[string]blob.Info
	if len(existing) > 0 {
		if copies, err = g.leftCopies(ctx, infos, existing, src, dst); err != nil {
			return err
		}
	}
	if err := g.copyAll(ctx, infos, nil, copies, src, dst); err != nil {
		return err
	}
	return g.sweep(ctx, src, dst)
}

// leftCopies decides whether the destination directory dst, which holds
// existing, is what an interrupted move of src left: every key there is the
// copy of a key under src (same relative key, same content), or, once every
// file under src has its copy, the copy of a source already deleted. It
// returns the copies by source key, or an error wrapping ErrPrecondition
// (the destination exists) when dst holds anything else.
func (g *Tree) leftCopies(ctx context.Context, infos, existing []blob.Info, src, dst string) (map[string]blob.Info, error) {
	refused := fmt.Errorf("%q: %w: destination directory exists", dst, blob.ErrPrecondition)
	at := make(map[string]blob.Info, len(existing))
	for _, e := range existing {
		at[e.Key] = e
	}
	copies := map[string]blob.Info{}
	for _, info := range infos {
		e, ok := at[dst+info.Key[len(src):]]
		if !ok {
			continue
		}
		if e.Size != info.Size {
			return nil, refused
		}
		same, err := g.sameContent(ctx, info.Key, e.Key)
		if err != nil {
			return nil, err
		}
		if !same {
			return nil, refused
		}
		copies[info.Key] = e
	}
	// Copies of sources already deleted may only be there when every
	// remaining source was copied: deletes start after the last copy.
	if len(copies) < len(existing) && len(copies) < len(infos) {
		return nil, refused
	}
	return copies, nil
}

// sameContent reports whether the objects a and b hold the same bytes.
func (g *Tree) sameContent(ctx context.Context, a, b string) (bool, error) {
	da, _, err := g.store.Get(ctx, a, g.readLimit(a))
	if err != nil {
		return false, err
	}
	db, _, err := g.store.Get(ctx, b, g.readLimit(b))
	if errors.Is(err, blob.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(da, db), nil
}

// absentTree returns ErrPrecondition when any key lies under dst+"/".
func (g *Tree) absentTree(ctx context.Context, dst string) error {
	for _, err := range g.store.List(ctx, dst+"/") {
		if err != nil {
			return err
		}
		return fmt.Errorf("%q: %w: destination directory exists", dst, blob.ErrPrecondition)
	}
	return nil
}

// copied is one file of a move.
type copied struct {
	from blob.Info // the source as copied (its key and version)
	to   string    // its new key; "" while not copied
	ver  string    // the version at the new key
	made bool      // this call wrote the copy
}

// copyAll copies every object of infos from under src to under dst, except
// those whose copy is in copies already, then deletes the sources. data
// holds contents already read, by source key, and is only read: a file's
// move passes its content, a directory's nil.
//
// Both phases run at most moveParallel calls at once, and the deletes start
// only once every copy is made, so each file is at its old key, its new key
// or both throughout, and an interrupted move leaves what leftCopies
// recognises. A failed copy stops the copying (the calls in flight finish),
// and the copies made are removed again, as they are when the look after
// the last copy finds that a create raced the move (settleMove).
func (g *Tree) copyAll(ctx context.Context, infos []blob.Info, data map[string][]byte, copies map[string]blob.Info,
	src, dst string) error {
	jobs := make([]copied, len(infos)) // each goroutine writes only its own element
	var todo []int                     // indexes of infos still to copy
	for i, info := range infos {
		if e, ok := copies[info.Key]; ok {
			jobs[i] = copied{from: info, to: e.Key, ver: e.Version}
			continue
		}
		todo = append(todo, i)
	}
	err := parallel(ctx, len(todo), true, func(k int) error {
		i := todo[k]
		info := infos[i]
		to := dst + info.Key[len(src):]
		body, ok := data[info.Key]
		if !ok {
			// A copy on the server where the store can (blob.Copier),
			// otherwise Get and Put(IfAbsent); from is the version copied.
			from, put, err := blob.Copy(ctx, g.store, info.Key, to, info.Version)
			if err != nil {
				return err
			}
			jobs[i] = copied{from: from, to: to, ver: put.Version, made: true}
			return nil
		}
		put, err := g.store.Put(ctx, to, body, blob.Cond{IfAbsent: true})
		if err != nil {
			return err
		}
		jobs[i] = copied{from: info, to: to, ver: put.Version, made: true}
		return nil
	})
	if err == nil {
		// Every copy landed and no source is deleted yet: look for a
		// create that raced the move, and on a clash remove the copies.
		what := movedDir
		if data != nil {
			what = movedFile
		}
		err = g.settleMove(ctx, src, dst, what, func(context.Context) error { return nil })
	}
	if err != nil {
		// Remove our own copies, if nobody rewrote them meanwhile, even
		// when ctx is done.
		cctx := context.WithoutCancel(ctx)
		undo := parallel(cctx, len(jobs), false, func(i int) error {
			c := jobs[i]
			if !c.made {
				return nil
			}
			if err := g.store.Delete(cctx, c.to, blob.Cond{IfVersion: c.ver}); err != nil && !errors.Is(err, blob.ErrNotExist) {
				return fmt.Errorf("undoing copy: %w", err)
			}
			return nil
		})
		return errors.Join(err, undo)
	}
	return g.dropSources(ctx, jobs)
}

// dropSources deletes the moved sources, each only at the version that was
// copied (blob.DeleteBatch: in few requests on a store that batches
// them, otherwise up to blob.DeleteParallel Delete(IfVersion) calls at
// once). A source rewritten since it was copied is refused there and goes
// through dropSource, which carries the newer content over. Its errors
// never wrap ErrPrecondition or ErrNotExist.
func (g *Tree) dropSources(ctx context.Context, jobs []copied) error {
	froms := make([]blob.Info, len(jobs))
	for i, j := range jobs {
		froms[i] = blob.Info{Key: j.from.Key, Version: j.from.Version}
	}
	errs, err := blob.DeleteBatch(ctx, g.store, froms)
	if err != nil {
		if errors.Is(err, blob.ErrPrecondition) || errors.Is(err, blob.ErrNotExist) {
			err = errors.New(err.Error())
		}
		return fmt.Errorf("gate: move: %d files were copied but their sources not removed: %w", len(jobs), err)
	}
	return parallel(ctx, len(jobs), false, func(i int) error {
		switch e := errs[i]; {
		case e == nil:
			return nil
		case errors.Is(e, blob.ErrNotExist): // another writer deleted it
			g.sourceGone(ctx, jobs[i].from.Key)
			return nil
		case errors.Is(e, blob.ErrPrecondition):
			return g.dropSource(ctx, jobs[i].from, jobs[i].to, jobs[i].ver)
		default:
			return fmt.Errorf("gate: move: %q was copied to %q but not removed: %w", jobs[i].from.Key, jobs[i].to, e)
		}
	})
}

// dropSource deletes the moved object src, whose copy at the key to has
// version toVer. If another writer rewrote src after it was copied, the
// newer content is carried over to the copy and the delete tried again, a
// bounded number of times. Its errors never wrap ErrPrecondition or
// ErrNotExist, which callers read as "destination exists" and "no source".
func (g *Tree) dropSource(ctx context.Context, src blob.Info, to, toVer string) error {
	for range sweepRounds {
		err := g.store.Delete(ctx, src.Key, blob.Cond{IfVersion: src.Version})
		if err == nil {
			return nil
		}
		if errors.Is(err, blob.ErrNotExist) { // another writer deleted it
			g.sourceGone(ctx, src.Key)
			return nil
		}
		if !errors.Is(err, blob.ErrPrecondition) {
			return fmt.Errorf("gate: move: %q was copied to %q but not removed: %w", src.Key, to, err)
		}
		data, info, err := g.store.Get(ctx, src.Key, g.readLimit(src.Key))
		if errors.Is(err, blob.ErrNotExist) { // another writer deleted it
			g.sourceGone(ctx, src.Key)
			return nil
		}
		if err != nil { // neither ErrNotExist nor, from a Get, ErrPrecondition
			return fmt.Errorf("gate: move: %q was copied to %q but not removed: %w", src.Key, to, err)
		}
		put, err := g.store.Put(ctx, to, data, blob.Cond{IfVersion: toVer})
		if err != nil {
			return fmt.Errorf("gate: move: %q and its copy %q both changed during the move; both are kept: %v", src.Key, to, err)
		}
		src, toVer = info, put.Version
	}
	return fmt.Errorf("gate: move: %q kept changing during the move; it is kept at both %q and its old key", src.Key, to)
}

// sweep moves what a listing of src shows after the move, round by round:
// each key left is copied to its place under dst (or, when an identical copy
// is there, only deleted). It fails when keys remain after sweepRounds, or
// when one has a different copy at its destination.
func (g *Tree) sweep(ctx context.Context, src, dst string) error {
	for range sweepRounds {
		left, err := blob.ListAll(ctx, g.store, src+"/")
		if err != nil || len(left) == 0 {
			return err
		}
		for _, info := range left {
			data, info, err := g.store.Get(ctx, info.Key, g.readLimit(info.Key))
			if errors.Is(err, blob.ErrNotExist) {
				continue
			}
			if err != nil {
				return err
			}
			to := dst + info.Key[len(src):]
			put, err := g.store.Put(ctx, to, data, blob.Cond{IfAbsent: true})
			if errors.Is(err, blob.ErrPrecondition) {
				same, serr := g.sameContent(ctx, info.Key, to)
				if serr != nil {
					return serr
				}
				if !same {
					return fmt.Errorf("%w: %q has a different copy at %q", errLeftBehind, info.Key, to)
				}
				switch err := g.store.Delete(ctx, info.Key, blob.Cond{IfVersion: info.Version}); {
				case errors.Is(err, blob.ErrNotExist): // another writer deleted it
					g.sourceGone(ctx, info.Key)
				case err != nil:
					return fmt.Errorf("gate: move: %q not removed: %v", info.Key, err)
				}
				continue
			}
			if err != nil {
				return err
			}
			if err := g.dropSource(ctx, info, to, put.Version); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("%w: under %q", errLeftBehind, src)
}
