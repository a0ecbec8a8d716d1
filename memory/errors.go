package memory

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
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
// (cancelled, timed out, read-only, rejected path, any other failure). The
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

// retry runs attempt until it reports no conflict with another writer,
// at most 1+h.retries times, sleeping a short, jittered, growing time
// between attempts. After the last conflict it returns the conflict message
// for path. A ctx done while waiting is a storage failure.
func (h *Handler) retry(ctx context.Context, c *command, path string, attempt func() (res Result, conflict bool)) Result {
	for n := 0; ; n++ {
		res, conflict := attempt()
		if !conflict {
			return res
		}
		h.observeConflict(ctx, n < h.retries)
		if n >= h.retries {
			return errorResult(ErrConflict, msgConflict(path))
		}
		if err := sleep(ctx, backoff(n)); err != nil {
			return h.storageFailure(ctx, c, path, err)
		}
	}
}

// backoff is the wait before retry n (0-based): a random time between half
// and all of 2ms·2ⁿ, capped at 100ms, so that racing writers spread out.
func backoff(n int) time.Duration {
	d := min(2*time.Millisecond<<min(n, 10), 100*time.Millisecond)
	return d/2 + rand.N(d/2+1)
}

// sleep waits for d or until ctx is done, and then returns ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
