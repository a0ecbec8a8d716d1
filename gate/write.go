package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// createFile is create's protocol for the file key and its content data;
// with overwrite, an existing file is replaced. Its first attempt at a new
// file of an allowed size takes the fast path (createNew); every other
// attempt, and one the fast path cannot answer, probes first. It returns
// the file's new version.
func (g *Tree) createFile(ctx context.Context, key string, data []byte, overwrite bool) (version string, err error) {
	size, maxBytes, maxFiles := int64(len(data)), g.maxFileBytesAt(key), g.maxFilesAt(key)
	fast := !overwrite && size <= maxBytes
	var (
		read   *countRef // the count as the fast path read it, if it did
		failed error     // the last attempt's failure
	)
	err = g.retry(ctx, key, func() (lost bool) {
		if fast {
			fast = false
			v, retry, ok, err := g.createNew(ctx, key, data, maxFiles, &read)
			if ok {
				version, failed = v, err
				return retry
			}
		}
		version, lost, failed = g.createAttempt(ctx, key, data, overwrite, maxFiles, read)
		read = nil
		return lost
	})
	return version, cmp.Or(err, failed)
}

// createAttempt is one attempt of createFile that probes before it
// writes. lost reports a race lost to another writer: the attempt is to be
// made again.
func (g *Tree) createAttempt(ctx context.Context, key string, data []byte, overwrite bool, maxFiles int, read *countRef) (version string, lost bool, err error) {
	size, maxBytes := int64(len(data)), g.maxFileBytesAt(key)
	s, err := g.probe(ctx, key, overwrite)
	switch {
	case err != nil:
		return "", false, err
	case s.isDir || s.isFile && !overwrite:
		return "", false, refuse(ErrExists, key)
	case s.fileAncestor != "":
		return "", false, refuse(ErrNotDir, s.fileAncestor)
	case size > maxBytes:
		return "", false, &Error{Kind: ErrTooLarge, Key: key, Size: size, Limit: maxBytes}
	}
	cond := blob.Cond{IfAbsent: true}
	var r reservation
	switch {
	case s.isFile: // replaced: no new file to count
		cond = blob.Cond{IfVersion: s.version}
	case maxFiles >= 0:
		var full int
		r, full, err = g.reserve(ctx, []string{key}, maxFiles, read)
		switch {
		case errors.Is(err, errCountBusy): // the count kept changing: try again later
			return "", true, nil
		case err != nil:
			return "", false, err
		}
		if full >= 0 {
			return "", false, &Error{Kind: ErrFull, Key: key, Size: int64(full), Limit: int64(maxFiles)}
		}
	}
	if r.key != "" && time.Since(r.at) > pendingTTL/2 {
		// A recount may have dropped the reservation (count.go).
		g.release(ctx, r)
		return "", false, errSlowCreate
	}
	put, err := g.store.Put(ctx, key, data, cond)
	switch {
	case err == nil && s.isFile: // a file replaced: no new name
		return put.Version, false, nil
	case err == nil:
		if r.key != "" {
			err := g.confirm(ctx, r)
			switch {
			case errors.Is(err, errCountBusy):
				// The count holds the file; only its reservation
				// stays on the pending list, where a recount finds
				// the file listed and the entry expires. Contention
				// on the count is no reason to fail the create.
				g.log.LogAttrs(ctx, slog.LevelWarn, "gate: a create's reservation stays on the file count's pending list",
					slog.String("key", key), slog.Any("error", err))
			case err != nil:
				return "", false, g.undoCreate(ctx, key, put.Version, err)
			}
		}
		// A create that settle withdraws keeps its reservation: the
		// count is then too high, which the next recount mends.
		return g.settle(ctx, key, data, put.Version)
	case !errors.Is(err, blob.ErrPrecondition):
		// The file may have landed: keep the reservation.
		return "", false, err
	}
	// Another writer got there first: it created the file (and
	// counted it), or (on a store that refuses a key under an object)
	// a file at an ancestor. The next probe tells which; it never
	// overwrites either.
	if r.key != "" {
		g.release(ctx, r)
	}
	return "", true, nil
}

// countMargin is how near the file limit a create still counts its file
// while it writes it (createNew). Within the last countMargin places of
// the limit it reserves its place before it writes, which keeps the limit
// exact under races (count.go).
const countMargin = 16

// errNearLimit is countOne's answer for a count within countMargin of the
// limit, or one it cannot read.
var errNearLimit = errors.New("gate: the file count is near the limit")

// createNew is the fast path of a create of a new file: its Put(IfAbsent)
// and, with the file limit on, the count's conditional Put of one more
// file, at once; then settle's look. That is two round trips, the fewest
// the tree's rules allow on a store that does not keep them itself (a look
// must follow the write it checks), and one on a store that does
// (blob.Traits.ExclusiveNames: no look). On a store that records every
// write (blob.Traits.RecordsWrites) it also looks before it writes, so
// that a create refused because the name is a directory, or under a file,
// records nothing.
//
// ok is false when the slow path must answer: the name is taken (its probe
// says how), the count is near the limit (the file is withdrawn before it
// answers), or unknown.
//
// When it read the count and did not use it, it sets *read to it. On
// success it returns the file's version.
func (g *Tree) createNew(ctx context.Context, key string, data []byte, maxFiles int, read **countRef) (version string, retry, ok bool, err error) {
	var ref countRef
	if maxFiles >= 0 {
		var (
			fresh bool
			err   error
		)
		if ref, fresh, err = g.known(ctx, g.countKey(key)); err != nil {
			return "", false, true, err
		}
		if !countsFast(ref, maxFiles) {
			if fresh {
				*read = &ref
			}
			return "", false, false, nil
		}
	}
	if t := blob.TraitsOf(g.store); t.RecordsWrites && !t.ExclusiveNames {
		// A refused create must leave no record: look before writing
		// (settle looks again after, for a writer racing this one).
		switch clash, err := g.clashes(ctx, key); {
		case err != nil:
			return "", false, true, err
		case clash:
			return "", false, false, nil
		}
	}
	var (
		put              blob.Info
		putErr, countErr error
		counted          countRef
	)
	concurrently(
		func() { put, putErr = g.store.Put(ctx, key, data, blob.Cond{IfAbsent: true}) },
		func() {
			if maxFiles >= 0 {
				counted, countErr = g.countOne(ctx, ref, maxFiles)
			}
		},
	)
	switch {
	case errors.Is(putErr, blob.ErrPrecondition):
		// The name is taken (or, on a store that keeps the tree's rules,
		// an ancestor is a file): the probe tells which.
		if maxFiles >= 0 && countErr == nil {
			g.uncount(ctx, counted)
		}
		return "", false, false, nil
	case putErr != nil:
		// The file may have landed: the count, if it was raised, stays.
		return "", false, true, putErr
	case countErr != nil:
		if err := g.withdraw(ctx, key, put.Version); err != nil {
			return "", false, true, errors.Join(countErr, err)
		}
		switch {
		case errors.Is(countErr, errNearLimit):
			return "", false, false, nil
		case errors.Is(countErr, errCountBusy):
			return "", true, true, nil
		}
		return "", false, true, countErr
	}
	version, retry, err = g.settle(ctx, key, data, put.Version)
	if retry && maxFiles >= 0 {
		g.uncount(ctx, counted) // settle withdrew the file
	}
	return version, retry, true, err
}

// countsFast reports whether a create may count its file while it writes
// it, on the count ref: one that is known and not within countMargin of
// maxFiles.
func countsFast(ref countRef, maxFiles int) bool {
	return ref.exists && ref.state.Files >= 0 && ref.state.Files < maxFiles-countMargin
}

// countOne adds one file to the count ref, conditional on its version, and
// reads it again when another writer changed it. It takes off, in the same
// write, the files this Tree deleted from the scope since (its credit,
// when the count's token is still the one they were deleted under). It
// fails with errNearLimit when the count is not one that countsFast
// allows, and with errCountBusy when it kept changing.
func (g *Tree) countOne(ctx context.Context, ref countRef, maxFiles int) (_ countRef, err error) {
	cr := g.counts.takeCredit(ref.key)
	used := 0
	defer func() {
		switch {
		case err == nil:
			cr.n -= used
			g.counts.giveBack(ref.key, cr)
		case errors.Is(err, errNearLimit), errors.Is(err, errCountBusy), errors.Is(err, context.Canceled),
			errors.Is(err, context.DeadlineExceeded):
			g.counts.giveBack(ref.key, cr) // nothing was written
		}
		// After any other failure the write may have landed with the
		// credit taken off: it is dropped (the count is then too high).
	}()
	for attempt := range countAttempts {
		if attempt > 0 {
			if err := countWait(ctx, attempt-1); err != nil {
				return ref, err
			}
			var err error
			if ref, err = g.readCount(ctx, ref.key); err != nil {
				return ref, err
			}
		}
		if !countsFast(ref, maxFiles) {
			return ref, errNearLimit
		}
		used = 0
		if cr.token == ref.state.Token {
			used = min(cr.n, ref.state.Files)
		}
		next := ref.state
		next.Files += 1 - used
		next.Counted = false
		// Far from the limit the count need not survive a crash of the
		// machine (count.go): its write skips the store's syncs.
		written, err := g.writeCount(blob.WithLazySync(ctx), ref, next)
		if !errors.Is(err, blob.ErrPrecondition) {
			return written, err
		}
	}
	return ref, errCountBusy
}

// uncount takes back the file that countOne added to ref, for a create
// whose file did not stay, unless a recount wrote the count since.
// Failures leave the count too high, which is safe; they are logged.
func (g *Tree) uncount(ctx context.Context, ref countRef) {
	g.subtract(context.WithoutCancel(ctx), ref)
}

// withdraw deletes the file key that this operation wrote with version (rule
// 2 of settleHidden first). It deletes even when ctx is done: a failed
// operation must leave no file.
func (g *Tree) withdraw(ctx context.Context, key, version string) error {
	wctx := context.WithoutCancel(ctx)
	err := g.markWithdrawal(wctx, key) // clash.go
	derr := g.store.Delete(wctx, key, blob.Cond{IfVersion: version})
	if derr != nil && !errors.Is(derr, blob.ErrNotExist) && !errors.Is(derr, blob.ErrPrecondition) {
		err = errors.Join(err, fmt.Errorf("gate: withdrawing the file %q this operation wrote: %w", key, derr))
	}
	return err
}

// undoCreate deletes the file key, just created with version, whose file
// count could not be confirmed (cause), and returns the failure. Its
// reservation stays: the count is then too high, which is safe. It deletes
// even when ctx is done: a failed operation must leave no file.
func (g *Tree) undoCreate(ctx context.Context, key, version string, cause error) error {
	return errors.Join(cause, g.withdraw(ctx, key, version))
}

// survey is what create needs to know about a key.
type survey struct {
	isFile       bool
	version      string // the file's, when isFile
	isDir        bool
	fileAncestor string // the key of the highest ancestor that is a file
}

// probe answers create's questions without a count: one Stat of the key
// and one Stat per ancestor, at once; then, when the key is no file, one
// List of its directory up to the first memory file.
func (g *Tree) probe(ctx context.Context, key string, overwrite bool) (survey, error) {
	var (
		s       survey
		anc     = ancestors(key)
		isFile  = make([]bool, len(anc))
		info    blob.Info
		fileErr error
		ancErr  error
	)
	concurrently(
		func() { info, fileErr = g.store.Stat(ctx, key) },
		func() {
			ancErr = parallel(ctx, len(anc), false, func(i int) error {
				_, err := g.store.Stat(ctx, anc[i])
				isFile[i] = err == nil
				if err == nil || errors.Is(err, blob.ErrNotExist) {
					return nil
				}
				return err
			})
		},
	)
	switch {
	case fileErr == nil:
		s.isFile, s.version = true, info.Version
	case !errors.Is(fileErr, blob.ErrNotExist):
		return s, fileErr
	default:
		var err error
		if s.isDir, err = g.isDir(ctx, key); err != nil {
			return s, err
		}
	}
	if s.isDir || s.isFile && !overwrite {
		return s, nil // create reports that it exists, before any ancestor
	}
	if i := slices.Index(isFile, true); i >= 0 {
		s.fileAncestor = anc[i]
	}
	return s, ancErr
}
