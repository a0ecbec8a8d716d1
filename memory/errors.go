package memory

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
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

// fail words err, the failure of c at the gate, as docs/spec.md says: a
// refusal by the tree's rules (a *gate.Error) with the command's text for
// it, anything else as a storage failure.
func (h *Handler) fail(ctx context.Context, c *command, err error) Result {
	ge, ok := errors.AsType[*gate.Error](err)
	if !ok {
		return h.storageFailure(ctx, c, c.pathOf(c.key), err)
	}
	path := c.pathOf(ge.Key)
	switch ge.Kind {
	case gate.ErrRoot:
		switch c.name {
		case "delete":
			return errorResult(ErrRoot, msgDeleteRoot)
		case "rename":
			return errorResult(ErrRoot, msgRenameRoot)
		case "create":
			return errorResult(ErrExists, msgExists(c.path))
		}
		return errorResult(ErrNotFile, msgNotAFile(c.path))
	case gate.ErrReadOnly:
		if ge.Key != "" {
			return errorResult(ErrReadOnly, msgCrossReadOnly(c.oldPath, c.newPath, ge.Key))
		}
		return errorResult(ErrReadOnly, msgReadOnly(c.name))
	case gate.ErrNotMounted:
		return errorResult(ErrNotMounted, msgNotMounted(path, h.gate.Mounts()))
	case gate.ErrMountPoint:
		if c.name == "rename" {
			return errorResult(ErrMountPoint, msgRenameMount(path))
		}
		return errorResult(ErrMountPoint, msgDeleteMount(path))
	case gate.ErrExists:
		if c.name == "rename" { // the new path, even when it names the old one's key
			return errorResult(ErrExists, msgDestExists(c.newPath))
		}
		return errorResult(ErrExists, msgExists(path))
	case gate.ErrNotFound:
		if c.name == "str_replace" {
			return errorResult(ErrNotFound, msgNotExistValid(path))
		}
		return errorResult(ErrNotFound, msgNotExist(path))
	case gate.ErrNotFile:
		return errorResult(ErrNotFile, msgNotAFile(path))
	case gate.ErrNotDir:
		return errorResult(ErrNotDir, msgAncestorFile(ge.Key))
	case gate.ErrIntoItself:
		return errorResult(ErrIntoItself, msgIntoItself(c.oldPath, c.newPath))
	case gate.ErrTooLarge:
		if ge.Read {
			return errorResult(ErrTooLarge, msgTooLargeToRead(path, ge.Err))
		}
		return errorResult(ErrTooLarge, msgTooBig(path, ge.Size, ge.Limit))
	case gate.ErrFull:
		return errorResult(ErrFull, msgFull(int(ge.Size), int(ge.Limit)))
	case gate.ErrSecret:
		if c.name == "rename" {
			return errorResult(ErrSecret, msgSecretNotMoved(c.oldPath, c.newPath, gate.PathOf(ge.Key), ge.Secrets))
		}
		return errorResult(ErrSecret, msgSecretRefused(c.path, ge.Secrets))
	case gate.ErrConflict:
		return failedResult(&Error{Kind: ErrConflict, Msg: msgConflict(path), Cause: ge.Err})
	}
	return h.storageFailure(ctx, c, c.pathOf(c.key), err) // a kind this handler does not word: a bug
}

// pathOf returns the path the model sent for key, when it is one of the
// command's own (in a rename, the old path's key names the old path
// first), else key's normalised path.
func (c *command) pathOf(key string) string {
	switch {
	case c.name == "rename" && key == c.key:
		return c.oldPath
	case c.name == "rename" && key == c.newKey:
		return c.newPath
	case c.name != "rename" && key == c.key:
		return c.path
	}
	return gate.PathOf(key)
}
