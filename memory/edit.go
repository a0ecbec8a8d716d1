package memory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/blob"
)

// create writes a new file, or with Overwrite replaces an existing one. Its
// checks, in docs/spec.md's order, cost nothing that grows with the store:
// probe (exists, ancestor is a file), the size, then, with the file limit
// on, a reservation in the scope's file count (count.go), which answers
// "full" without listing the store. Then one conditional Put; a new file
// then takes its reservation off the count's pending list (confirm) and
// costs the checks of settle, which keep a name from ending up both a file
// and a directory.
func (h *Handler) create(ctx context.Context, c *command) Result {
	key, res, ok := h.resolve(ctx, c, c.path)
	if !ok {
		return res
	}
	if key == "" {
		return errorResult(ErrExists, msgExists(c.path))
	}
	ctx, data, note, res, ok := h.screen(ctx, c, key, []byte(c.fileText)) // policy.go
	if !ok {
		return res
	}
	return withNote(h.createFile(ctx, c, key, data, h.overwrite), note)
}

// write is Write's command (api.go): a create that never overwrites, or a
// replacement of the file at c.ifVersion that never retries.
func (h *Handler) write(ctx context.Context, c *command) Result {
	key, res, ok := h.resolve(ctx, c, c.path)
	if !ok {
		return res
	}
	if key == "" {
		return errorResult(ErrNotFile, msgNotAFile(c.path))
	}
	ctx, data, note, res, ok := h.screen(ctx, c, key, c.data) // policy.go
	if !ok {
		return res
	}
	if c.ifVersion == "" {
		return withNote(h.createFile(ctx, c, key, data, false), note)
	}
	if n, most := int64(len(data)), h.maxFileBytesAt(key); n > most {
		return errorResult(ErrTooLarge, msgTooBig(c.path, n, most))
	}
	put, err := h.store.Put(ctx, key, data, blob.Cond{IfVersion: c.ifVersion})
	switch {
	case errors.Is(err, blob.ErrPrecondition):
		return failedResult(&Error{Kind: ErrConflict, Msg: msgConflict(c.path), Cause: err})
	case err != nil:
		return h.storageFailure(ctx, c, c.path, err)
	}
	return withNote(created(c, put.Version), note)
}

// createFile is create's protocol for the file key and its content data;
// with overwrite, an existing file is replaced. Its first attempt at a new
// file of an allowed size takes the fast path (createNew); every other
// attempt, and one the fast path cannot answer, probes first.
func (h *Handler) createFile(ctx context.Context, c *command, key string, data []byte, overwrite bool) Result {
	size, maxBytes, maxFiles := int64(len(data)), h.maxFileBytesAt(key), h.maxFilesAt(key)
	fast := !overwrite && size <= maxBytes
	var read *countRef // the count as the fast path read it, if it did
	return h.retry(ctx, c, c.path, func() (Result, bool) {
		if fast {
			fast = false
			res, retry, ok := h.createNew(ctx, c, key, data, maxFiles, &read)
			if ok {
				return res, retry
			}
		}
		s, err := h.probe(ctx, key, overwrite)
		switch {
		case err != nil:
			return h.storageFailure(ctx, c, c.path, err), false
		case s.isDir || s.isFile && !overwrite:
			return errorResult(ErrExists, msgExists(c.path)), false
		case s.fileAncestor != "":
			return errorResult(ErrNotDir, msgAncestorFile(s.fileAncestor)), false
		case size > maxBytes:
			return errorResult(ErrTooLarge, msgTooBig(c.path, size, maxBytes)), false
		}
		cond := blob.Cond{IfAbsent: true}
		var r reservation
		switch {
		case s.isFile: // replaced: no new file to count
			cond = blob.Cond{IfVersion: s.version}
		case maxFiles >= 0:
			var full int
			r, full, err = h.reserve(ctx, key, maxFiles, read)
			read = nil
			switch {
			case errors.Is(err, errCountBusy): // the count kept changing: try again later
				return Result{}, true
			case err != nil:
				return h.storageFailure(ctx, c, c.path, err), false
			}
			if full >= 0 {
				return errorResult(ErrFull, msgFull(full, maxFiles)), false
			}
		}
		if r.key != "" && time.Since(r.at) > pendingTTL/2 {
			// A recount may have dropped the reservation (count.go).
			h.release(ctx, r)
			return h.storageFailure(ctx, c, c.path, errSlowCreate), false
		}
		put, err := h.store.Put(ctx, key, data, cond)
		switch {
		case err == nil && s.isFile: // a file replaced: no new name
			return created(c, put.Version), false
		case err == nil:
			if r.key != "" {
				err := h.confirm(ctx, r)
				switch {
				case errors.Is(err, errCountBusy):
					// The count holds the file; only its reservation
					// stays on the pending list, where a recount finds
					// the file listed and the entry expires. Contention
					// on the count is no reason to fail the create.
					h.log.LogAttrs(ctx, slog.LevelWarn, "memory: a create's reservation stays on the file count's pending list",
						slog.String("path", c.path), slog.Any("error", err))
				case err != nil:
					return h.undoCreate(ctx, c, key, put.Version, err), false
				}
			}
			// A create that settle withdraws keeps its reservation: the
			// count is then too high, which the next recount mends.
			return h.settle(ctx, c, key, data, put.Version)
		case !errors.Is(err, blob.ErrPrecondition):
			// The file may have landed: keep the reservation.
			return h.storageFailure(ctx, c, c.path, err), false
		}
		// Another writer got there first: it created the file (and
		// counted it), or (on a store that refuses a key under an object)
		// a file at an ancestor. The next probe tells which; it never
		// overwrites either.
		if r.key != "" {
			h.release(ctx, r)
		}
		return Result{}, true
	})
}

// countMargin is how near the file limit a create still counts its file
// while it writes it (createNew). Within the last countMargin places of
// the limit it reserves its place before it writes, which keeps the limit
// exact under races (count.go).
const countMargin = 16

// errNearLimit is countOne's answer for a count within countMargin of the
// limit, or one it cannot read.
var errNearLimit = errors.New("memory: the file count is near the limit")

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
// When it read the count and did not use it, it sets *read to it.
func (h *Handler) createNew(ctx context.Context, c *command, key string, data []byte, maxFiles int, read **countRef) (res Result, retry, ok bool) {
	var ref countRef
	if maxFiles >= 0 {
		var (
			fresh bool
			err   error
		)
		if ref, fresh, err = h.known(ctx, h.countKey(key)); err != nil {
			return h.storageFailure(ctx, c, c.path, err), false, true
		}
		if !countsFast(ref, maxFiles) {
			if fresh {
				*read = &ref
			}
			return Result{}, false, false
		}
	}
	if t := blob.TraitsOf(h.store); t.RecordsWrites && !t.ExclusiveNames {
		// A refused create must leave no record: look before writing
		// (settle looks again after, for a writer racing this one).
		switch clash, err := h.clashes(ctx, key); {
		case err != nil:
			return h.storageFailure(ctx, c, c.path, err), false, true
		case clash:
			return Result{}, false, false
		}
	}
	var (
		put              blob.Info
		putErr, countErr error
		counted          countRef
	)
	concurrently(
		func() { put, putErr = h.store.Put(ctx, key, data, blob.Cond{IfAbsent: true}) },
		func() {
			if maxFiles >= 0 {
				counted, countErr = h.countOne(ctx, ref, maxFiles)
			}
		},
	)
	switch {
	case errors.Is(putErr, blob.ErrPrecondition):
		// The name is taken (or, on a store that keeps the tree's rules,
		// an ancestor is a file): the probe tells which.
		if maxFiles >= 0 && countErr == nil {
			h.uncount(ctx, counted)
		}
		return Result{}, false, false
	case putErr != nil:
		// The file may have landed: the count, if it was raised, stays.
		return h.storageFailure(ctx, c, c.path, putErr), false, true
	case countErr != nil:
		if err := h.withdraw(ctx, key, put.Version); err != nil {
			return h.storageFailure(ctx, c, c.path, errors.Join(countErr, err)), false, true
		}
		switch {
		case errors.Is(countErr, errNearLimit):
			return Result{}, false, false
		case errors.Is(countErr, errCountBusy):
			return Result{}, true, true
		}
		return h.storageFailure(ctx, c, c.path, countErr), false, true
	}
	res, retry = h.settle(ctx, c, key, data, put.Version)
	if retry && maxFiles >= 0 {
		h.uncount(ctx, counted) // settle withdrew the file
	}
	return res, retry, true
}

// countsFast reports whether a create may count its file while it writes
// it, on the count ref: one that is known and not within countMargin of
// maxFiles.
func countsFast(ref countRef, maxFiles int) bool {
	return ref.exists && ref.state.Files >= 0 && ref.state.Files < maxFiles-countMargin
}

// countOne adds one file to the count ref, conditional on its version, and
// reads it again when another writer changed it. It takes off, in the same
// write, the files this handler deleted from the scope since (its credit,
// when the count's token is still the one they were deleted under). It
// fails with errNearLimit when the count is not one that countsFast
// allows, and with errCountBusy when it kept changing.
func (h *Handler) countOne(ctx context.Context, ref countRef, maxFiles int) (_ countRef, err error) {
	cr := h.counts.takeCredit(ref.key)
	used := 0
	defer func() {
		switch {
		case err == nil:
			cr.n -= used
			h.counts.giveBack(ref.key, cr)
		case errors.Is(err, errNearLimit), errors.Is(err, errCountBusy), errors.Is(err, context.Canceled),
			errors.Is(err, context.DeadlineExceeded):
			h.counts.giveBack(ref.key, cr) // nothing was written
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
			if ref, err = h.readCount(ctx, ref.key); err != nil {
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
		written, err := h.writeCount(blob.WithLazySync(ctx), ref, next)
		if !errors.Is(err, blob.ErrPrecondition) {
			return written, err
		}
	}
	return ref, errCountBusy
}

// uncount takes back the file that countOne added to ref, for a create
// whose file did not stay, unless a recount wrote the count since.
// Failures leave the count too high, which is safe; they are logged.
func (h *Handler) uncount(ctx context.Context, ref countRef) {
	h.subtract(context.WithoutCancel(ctx), ref)
}

// withdraw deletes the file key that this command wrote with version (rule
// 2 of settleHidden first). It deletes even when ctx is done: a failed
// command must leave no file.
func (h *Handler) withdraw(ctx context.Context, key, version string) error {
	wctx := context.WithoutCancel(ctx)
	err := h.markWithdrawal(wctx, key) // clash.go
	derr := h.store.Delete(wctx, key, blob.Cond{IfVersion: version})
	if derr != nil && !errors.Is(derr, blob.ErrNotExist) && !errors.Is(derr, blob.ErrPrecondition) {
		err = errors.Join(err, fmt.Errorf("memory: withdrawing the file %q this command wrote: %w", key, derr))
	}
	return err
}

// undoCreate deletes the file key, just created with version, whose file
// count could not be confirmed (cause), and returns the storage failure.
// Its reservation stays: the count is then too high, which is safe. It
// deletes even when ctx is done: a failed command must leave no file.
func (h *Handler) undoCreate(ctx context.Context, c *command, key, version string, cause error) Result {
	return h.storageFailure(ctx, c, c.path, errors.Join(cause, h.withdraw(ctx, key, version)))
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
func (h *Handler) probe(ctx context.Context, key string, overwrite bool) (survey, error) {
	var (
		s       survey
		anc     = ancestors(key)
		isFile  = make([]bool, len(anc))
		info    blob.Info
		fileErr error
		ancErr  error
	)
	concurrently(
		func() { info, fileErr = h.store.Stat(ctx, key) },
		func() {
			ancErr = parallel(ctx, len(anc), false, func(i int) error {
				_, err := h.store.Stat(ctx, anc[i])
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
		if s.isDir, err = h.isDir(ctx, key); err != nil {
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

// editFunc computes a file's new content from its current (UTF-8) content.
// It returns the new content and the success text, or the failure.
type editFunc func(content []byte) (updated []byte, done string, fail *Error)

// edit is the read-modify-write of str_replace and insert: Get, apply,
// Put(IfVersion), and on a conflict the same again on the fresh content.
// missing gives the text for a path that does not exist.
func (h *Handler) edit(ctx context.Context, c *command, missing func(path string) string, apply editFunc) Result {
	key, res, ok := h.resolve(ctx, c, c.path)
	if !ok {
		return res
	}
	if key == "" {
		return errorResult(ErrNotFile, msgNotAFile(c.path))
	}
	// Writers of one file take turns where the store can lock a key (the
	// file store), so that none loses the race below; elsewhere this holds
	// nothing and the conditional Put decides.
	unlock, err := blob.Lock(ctx, h.store, key)
	if err != nil {
		return h.storageFailure(ctx, c, c.path, err)
	}
	defer unlock()
	return h.retry(ctx, c, c.path, func() (Result, bool) {
		content, info, err := h.store.Get(ctx, key, h.readLimit(key))
		if errors.Is(err, blob.ErrTooLarge) {
			return errorResult(ErrTooLarge, msgTooLargeToRead(c.path, err)), false
		}
		if errors.Is(err, blob.ErrNotExist) {
			isDir, err := h.isDir(ctx, key)
			switch {
			case err != nil:
				return h.storageFailure(ctx, c, c.path, err), false
			case isDir:
				return errorResult(ErrNotFile, msgNotAFile(c.path)), false
			}
			return errorResult(ErrNotFound, missing(c.path)), false
		}
		if err != nil {
			return h.storageFailure(ctx, c, c.path, err), false
		}
		if !utf8.Valid(content) {
			return errorResult(ErrNotText, msgNotUTF8(c.path)), false
		}
		updated, done, fail := apply(content)
		if fail != nil {
			return failedResult(fail), false
		}
		ctx, updated, done, res, ok := h.screenEdit(ctx, c, key, content, updated, done) // policy.go
		if !ok {
			return res, false
		}
		if n, most := int64(len(updated)), h.maxFileBytesAt(key); n > most {
			return errorResult(ErrTooLarge, msgTooBig(c.path, n, most)), false
		}
		_, err = h.store.Put(ctx, key, updated, blob.Cond{IfVersion: info.Version})
		switch {
		case err == nil:
			return textResult(done), false
		case errors.Is(err, blob.ErrPrecondition):
			return Result{}, true
		}
		return h.storageFailure(ctx, c, c.path, err), false
	})
}

// isDir reports whether any memory file lies under the directory key:
// reserved bookkeeping keys beneath it do not make it a directory. It reads
// the listing only up to the first memory file.
func (h *Handler) isDir(ctx context.Context, key string) (bool, error) {
	for info, err := range h.store.List(ctx, key+"/") {
		if err != nil {
			return false, err
		}
		if !isBookkeeping(info.Key) {
			return true, nil
		}
	}
	return false, nil
}

// strReplace replaces the one occurrence of old_str with new_str.
func (h *Handler) strReplace(ctx context.Context, c *command) Result {
	return h.edit(ctx, c, msgNotExistValid, func(content []byte) ([]byte, string, *Error) {
		if c.oldStr == "" {
			return nil, "", &Error{Kind: ErrInvalidInput, Msg: msgEmptyOldStr}
		}
		old := []byte(c.oldStr)
		at := bytes.Index(content, old)
		if at < 0 {
			return nil, "", &Error{Kind: ErrNoMatch, Msg: msgNoMatch(echo(c.oldStr, h.viewLimit), c.path)}
		}
		if bytes.Contains(content[at+len(old):], old) {
			return nil, "", &Error{Kind: ErrAmbiguous, Msg: msgManyMatches(echo(c.oldStr, h.viewLimit), matchLines(content, old))}
		}
		updated := make([]byte, 0, len(content)-len(old)+len(c.newStr))
		updated = append(updated, content[:at]...)
		updated = append(updated, c.newStr...)
		updated = append(updated, content[at+len(old):]...)

		// The snippet runs from 2 lines before the match's first line to 2
		// lines after the last line of the inserted text.
		first := 1 + bytes.Count(content[:at], []byte{'\n'})
		last := first + strings.Count(c.newStr, "\n")
		var b strings.Builder
		b.WriteString(snippetHeader)
		writeNumbered(&b, updated, max(first-2, 1), min(last+2, countLines(updated)), -1)
		return updated, b.String(), nil
	})
}

// matchLines returns the distinct 1-based line numbers where the
// non-overlapping occurrences of old start, ascending.
func matchLines(content, old []byte) []int {
	var lines []int
	line, counted := 1, 0 // line is the number of the line holding content[counted]
	for i := 0; ; {
		j := bytes.Index(content[i:], old)
		if j < 0 {
			return lines
		}
		at := i + j
		line += bytes.Count(content[counted:at], []byte{'\n'})
		counted = at
		if len(lines) == 0 || lines[len(lines)-1] != line {
			lines = append(lines, line)
		}
		i = at + len(old)
	}
}

// insert adds insert_text as whole lines after line insert_line.
func (h *Handler) insert(ctx context.Context, c *command) Result {
	return h.edit(ctx, c, msgNotExist, func(content []byte) ([]byte, string, *Error) {
		n := textLines(content)
		if c.insertLine < 0 || c.insertLine > int64(n) {
			return nil, "", &Error{Kind: ErrOutOfRange, Msg: msgInsertLine(c.insertLine, n)}
		}
		text := strings.TrimSuffix(c.insertText, "\n")
		k := int(c.insertLine)
		updated := make([]byte, 0, len(content)+len(text)+1)
		switch {
		case len(content) == 0: // an empty file gains a final '\n'
			updated = append(append(updated, text...), '\n')
		case k == n && content[len(content)-1] != '\n': // after an unterminated last line
			updated = append(append(append(updated, content...), '\n'), text...)
		default:
			at := lineStart(content, k+1)
			updated = append(updated, content[:at]...)
			updated = append(append(updated, text...), '\n')
			updated = append(updated, content[at:]...)
		}
		return updated, msgInserted(c.path), nil
	})
}

// textLines is the number of lines insert counts: a final '\n' ends the
// last line rather than starting a new one, and an empty file has none.
func textLines(content []byte) int {
	n := bytes.Count(content, []byte{'\n'})
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	return n
}
