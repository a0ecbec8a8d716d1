package memory

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// Causer is implemented by errors that can describe themselves to the model
// in a few words that name no credentials, host paths, bucket names or
// internal keys, for example "an object could not be decrypted".
//
// When a storage call fails, the model reads "The memory storage failed: "
// followed by a short cause. If the error, or any error it wraps (as
// errors.As finds it), is a Causer with a non-empty ModelCause, that text is
// the cause; otherwise the handler picks a fixed text from the error's kind
// (cancelled, timed out, read-only, rejected path, a server that cannot be
// reached, any other failure). The
// full error goes only to the Handler's Logger.
type Causer interface {
	ModelCause() string
}

// modelCause returns the short, safe cause of a storage failure.
func modelCause(err error) string {
	var c Causer
	if errors.As(err, &c) {
		if cause := c.ModelCause(); cause != "" {
			return cause
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "the request timed out"
	case errors.Is(err, blob.ErrReadOnly):
		return "the store is read-only"
	case errors.Is(err, blob.ErrInvalidKey):
		return "the store rejected the path"
	}
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
		return "the storage server could not be reached"
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return "the storage server could not be reached"
	}
	return "the storage backend returned an error"
}

// Kinds of failure. Every failed command's Result.Err is an *Error whose
// Kind is one of these; test with errors.Is(res.Err, memory.ErrNotFound).
var (
	// ErrInvalidInput: the command input is malformed (bad JSON, a missing
	// or mistyped parameter, an unknown command, an empty old_str).
	ErrInvalidInput = errors.New("memory: invalid command input")
	// ErrInvalidPath: a path breaks the rules of docs/spec.md "Paths" (prefix,
	// escape, characters, length, reserved name).
	ErrInvalidPath = errors.New("memory: invalid path")
	// ErrNotFound: the path names neither a file nor a directory.
	ErrNotFound = errors.New("memory: no such file or directory")
	// ErrExists: create's path, or rename's destination, already exists.
	ErrExists = errors.New("memory: already exists")
	// ErrNotFile: the path is a directory (or the root) where a file is
	// needed.
	ErrNotFile = errors.New("memory: not a file")
	// ErrNotDir: an ancestor of the path is a file.
	ErrNotDir = errors.New("memory: an ancestor is a file")
	// ErrNotText: the file is not UTF-8 text.
	ErrNotText = errors.New("memory: not a UTF-8 text file")
	// ErrOutOfRange: view_range or insert_line lies outside the file.
	ErrOutOfRange = errors.New("memory: line out of range")
	// ErrTooLarge: a file (or image) would be or is over a size or line
	// limit.
	ErrTooLarge = errors.New("memory: over a size limit")
	// ErrFull: the store holds Options.MaxFiles files already.
	ErrFull = errors.New("memory: the memory directory is full")
	// ErrNoMatch: str_replace's old_str does not occur in the file.
	ErrNoMatch = errors.New("memory: old_str not found")
	// ErrAmbiguous: str_replace's old_str occurs more than once.
	ErrAmbiguous = errors.New("memory: old_str is not unique")
	// ErrRoot: delete or rename of /memories itself.
	ErrRoot = errors.New("memory: /memories itself")
	// ErrIntoItself: rename of a directory into itself.
	ErrIntoItself = errors.New("memory: move into itself")
	// ErrConflict: other writers kept changing the file; nothing was done.
	ErrConflict = errors.New("memory: concurrent change")
	// ErrReadOnly: a writing command on a read-only handler or store.
	ErrReadOnly = errors.New("memory: read-only")
	// ErrStorage: a storage call failed. Error.Cause holds the store's
	// error.
	ErrStorage = errors.New("memory: storage failure")
)

// Error is the failure of a command, as Result.Err and as the error of
// ReadFile, Files and Resolve.
//
// Error() is the SPEC text the model reads, without the "Error: " prefix
// that Result.Text carries. Unwrap yields Kind, and Cause when set, so
// errors.Is(err, memory.ErrNotFound) and errors.Is(err, context.Canceled)
// both work.
type Error struct {
	// Kind is one of the Err* sentinels of this package.
	Kind error
	// Msg is the SPEC text, without "Error: ".
	Msg string
	// Cause is the storage error behind an ErrStorage failure, nil
	// otherwise. It may name hosts, buckets and keys: log it, never show
	// it to the model (Msg holds the short, safe cause).
	Cause error
}

// Error returns Msg.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns Kind, and Cause when it is set.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Kind, e.Cause}
	}
	return []error{e.Kind}
}

// Refusal reports whether err is the write gate refusing one file by the
// tree's rules, and returns the memory tool's text for it (Error.Msg): the
// file is over a size limit (ErrTooLarge), the store is full (ErrFull),
// the content holds a secret the write policy rejects (ErrSecret), or an
// ancestor of the path is a file (ErrNotDir). A writer of many files (copy,
// import, sync) skips such a file with that text and writes the others;
// any other error is the writer's to handle.
func Refusal(err error) (text string, ok bool) {
	me, isMemory := errors.AsType[*Error](err)
	if !isMemory {
		return "", false
	}
	switch me.Kind {
	case ErrTooLarge, ErrFull, ErrSecret, ErrNotDir:
		return me.Msg, true
	}
	return "", false
}

// errorResult is the Result of a failed command; msg lacks "Error: ".
func errorResult(kind error, msg string) Result {
	return Result{Text: "Error: " + msg, IsError: true, Err: &Error{Kind: kind, Msg: msg}}
}

// failedResult is the Result of a command that failed with err.
func failedResult(err *Error) Result {
	return Result{Text: "Error: " + err.Msg, IsError: true, Err: err}
}

// textResult is the Result of a successful command.
func textResult(text string) Result { return Result{Text: text} }

// created is the Result of a create or a Write of c.path that left the
// file at the store version version, which Write returns.
func created(c *command, version string) Result {
	res := textResult(msgCreated(c.path))
	if c.name == "write" {
		res.version = version
	}
	return res
}

// storageFailure logs err in full, with the command and the path it was
// about (and a rename's new_path), and returns the Result the model sees,
// which holds only the short cause.
func (h *Handler) storageFailure(ctx context.Context, c *command, path string, err error) Result {
	attrs := []slog.Attr{slog.String("command", c.name), slog.String("path", path), slog.Any("error", err)}
	if c.name == "rename" {
		attrs = append(attrs, slog.String("new_path", c.newPath))
	}
	h.log.LogAttrs(ctx, slog.LevelError, "memory: storage call failed", attrs...)
	return failedResult(&Error{Kind: ErrStorage, Msg: msgStorage(modelCause(err)), Cause: err})
}

// retry runs attempt until it reports no conflict with another writer, at
// most 1+h.retries times, waiting between attempts as pacer.run says: a
// random time that grows with each lost race and is sized by how long the
// command's attempts take on this store. After the last conflict it returns
// the conflict message for path. A ctx done while waiting is a storage
// failure.
func (h *Handler) retry(ctx context.Context, c *command, path string, attempt func() (res Result, conflict bool)) Result {
	p := pacer{clock: systemClock{}, retries: h.retries}
	res, landed, err := p.run(ctx, attempt, func(retrying bool) { h.observeConflict(ctx, retrying) })
	switch {
	case err != nil:
		return h.storageFailure(ctx, c, path, err)
	case !landed:
		return errorResult(ErrConflict, msgConflict(path))
	}
	return res
}

// The pacing of retries (see pacer).
const (
	// minSlot and maxSlot bound the slot, the measured time of one attempt.
	// The floor keeps a fast store (memory, a local disk) from retrying in
	// a busy loop; the ceiling keeps one stalled attempt from stretching
	// the window beyond use.
	minSlot = time.Millisecond
	maxSlot = time.Second
	// maxSlots is the widest window, in slots: twice the 64 writers one
	// file is meant to bear at once.
	maxSlots = 128
	// growth is the factor by which the window widens with each lost race:
	// 2, 8, 32, 128 slots, so that a writer among 64 finds the width at
	// which they take turns after 3 lost races, not 6.
	growth = 4
	// maxWait caps one wait, whatever the slot.
	maxWait = 4 * time.Second
	// retryBudget caps the total of one command's waits. Once it is spent
	// the next conflict is final, and the model is told to try again well
	// within a command timeout (mcpserver's default is 60 s).
	retryBudget = 20 * time.Second
)

// clock is the time source of a pacer: the system's, or a test's.
type clock interface {
	now() time.Time
	// sleep waits for d or until ctx is done, and then returns ctx's
	// error.
	sleep(ctx context.Context, d time.Duration) error
	// jitter returns a uniformly random duration in [0, d].
	jitter(d time.Duration) time.Duration
}

// systemClock is the clock of every Handler.
type systemClock struct{}

func (systemClock) now() time.Time                                   { return time.Now() }
func (systemClock) sleep(ctx context.Context, d time.Duration) error { return sleep(ctx, d) }
func (systemClock) jitter(d time.Duration) time.Duration             { return rand.N(d + 1) }

// pacer paces the attempts of one command, which lose races to other
// writers of the same file. It waits between them, with exponential backoff
// and full jitter, in units of the slot: the time of the command's fastest
// failed attempt (for an edit, a read and a refused conditional write).
// That is about how long another writer's read-modify-write holds the file
// on this backend: well under a millisecond on a local disk, a few
// milliseconds on an object store nearby, tens across a wide-area link, so
// the waits fit the backend where fixed milliseconds would be too long for
// one and far too short for another. The fastest attempt, not the mean,
// because the first attempts of writers that start together queue at the
// server and would overstate it (on Azurite, 64 writers' first attempts
// took about a second, their later ones 20-300 ms).
//
// Wait n (0-based) is random in [0, window(n)], whose width grows fourfold
// with each lost race, from 2 slots to maxSlots slots (and maxWait): k
// writers racing for one file spread out over up to 2k slots, and most
// attempts find the file free. Retries and retryBudget bound the attempts
// and the total wait; the store's own locks (blob.Locker, the file store and
// Redis) take turns before any of this, and then no attempt loses a race.
//
// The zero value is not usable: set clock. A pacer is not safe for
// concurrent use; each command makes its own.
type pacer struct {
	clock   clock
	retries int // attempts after the first; negative means none

	fastest time.Duration // the shortest failed attempt
	failed  int           // how many attempts lost a race
	waited  time.Duration // the total of the waits so far
}

// run calls attempt until it reports no conflict, and returns its Result
// with landed true. After each conflict it calls conflict with whether
// another attempt follows, and waits before it. It gives up, with landed
// false, after 1+retries attempts or once its waits total retryBudget (the
// last wait is cut to what the budget leaves). It returns ctx's error,
// without another attempt, when ctx is done before or during a wait; an
// attempt itself is expected to fail on a done ctx, as storage calls do.
func (p *pacer) run(ctx context.Context, attempt func() (Result, bool), conflict func(retrying bool)) (res Result, landed bool, err error) {
	for {
		start := p.clock.now()
		res, lost := attempt()
		if !lost {
			return res, true, nil
		}
		if took := max(p.clock.now().Sub(start), 0); p.failed == 0 || took < p.fastest {
			p.fastest = took
		}
		p.failed++
		d, ok := p.next()
		conflict(ok)
		if !ok {
			return Result{}, false, nil
		}
		if err := p.clock.sleep(ctx, d); err != nil {
			return Result{}, false, err
		}
		p.waited += d
	}
}

// next returns the wait before the next attempt, after p.failed lost
// races, and false when no attempt follows.
func (p *pacer) next() (time.Duration, bool) {
	left := retryBudget - p.waited
	if p.failed > p.retries || left <= 0 {
		return 0, false
	}
	return min(p.clock.jitter(window(p.failed-1, p.slot())), left), true
}

// slot is the time of the fastest failed attempt, within [minSlot,
// maxSlot].
func (p *pacer) slot() time.Duration {
	return min(max(p.fastest, minSlot), maxSlot)
}

// window is the widest wait before retry n (0-based): 2·4ⁿ slots, at most
// maxSlots slots and maxWait.
func window(n int, slot time.Duration) time.Duration {
	slots := time.Duration(2)
	for ; n > 0 && slots < maxSlots; n-- {
		slots *= growth
	}
	return min(min(slots, maxSlots)*slot, maxWait)
}

// sleep waits for d or until ctx is done, and then returns ctx's error. A
// ctx already done returns at once, whatever d.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
