package memory

import (
	"context"
	"errors"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
)

// The typed API: the six commands with Go arguments, and what programs (a
// CLI, an MCP server, sync and transfer tools) need besides.

// View runs the view command. viewRange is nil or empty for the whole file;
// otherwise it is [first, last] as the model sends it (last -1 for the end).
// It returns exactly the Result Execute returns for the same command.
func (h *Handler) View(ctx context.Context, path string, viewRange []int) Result {
	c := command{name: "view", path: path}
	if viewRange != nil {
		c.viewRange = make([]int64, len(viewRange))
		for i, n := range viewRange {
			c.viewRange[i] = int64(n)
		}
	}
	return h.do(ctx, &c)
}

// Create runs the create command: it writes fileText to a new file at path
// (with Options.Overwrite, it may replace an existing file).
func (h *Handler) Create(ctx context.Context, path, fileText string) Result {
	return h.do(ctx, &command{name: "create", path: path, fileText: fileText})
}

// StrReplace runs the str_replace command: the one occurrence of oldStr in
// the file at path becomes newStr.
func (h *Handler) StrReplace(ctx context.Context, path, oldStr, newStr string) Result {
	return h.do(ctx, &command{name: "str_replace", path: path, oldStr: oldStr, newStr: newStr})
}

// Insert runs the insert command: insertText becomes whole lines after line
// insertLine (0: at the start) of the file at path.
func (h *Handler) Insert(ctx context.Context, path string, insertLine int64, insertText string) Result {
	return h.do(ctx, &command{name: "insert", path: path, insertLine: insertLine, insertText: insertText})
}

// Delete runs the delete command on a file or a directory.
func (h *Handler) Delete(ctx context.Context, path string) Result {
	return h.do(ctx, &command{name: "delete", path: path})
}

// Rename runs the rename command: the file or directory oldPath moves to
// newPath, which must not exist.
func (h *Handler) Rename(ctx context.Context, oldPath, newPath string) Result {
	return h.do(ctx, &command{name: "rename", oldPath: oldPath, newPath: newPath})
}

// Write writes data, any bytes, as the whole content of the file at path,
// under the rules the model's commands obey, for programs that write files
// on a person's behalf (a history restore, a web console). With ifVersion
// "" it is a create that never overwrites: the path must name no file or
// directory, no ancestor may be a file, and the size and file limits apply;
// the new file is counted. Otherwise the file must still be at the store
// version ifVersion (FileInfo.Version), and only the size limit applies.
// It does not retry: a file that is not at ifVersion (changed, deleted or
// never there) is an *Error of kind ErrConflict that wraps
// blob.ErrPrecondition, and nothing is written.
//
// On success it returns the file's new store version (FileInfo.Version). On
// failure the error is the *Error of the create command (ErrInvalidPath,
// ErrReadOnly, ErrExists (a mount point too), ErrNotDir, ErrTooLarge,
// ErrFull, ErrSecret, ErrConflict, ErrStorage; on a mount table
// ErrNotMounted), or ErrNotFile for /memories itself.
func (h *Handler) Write(ctx context.Context, path string, data []byte, ifVersion string) (version string, err error) {
	res := h.do(ctx, &command{name: "write", path: path, data: data, ifVersion: ifVersion})
	return res.version, res.Err
}

// Remove deletes the file at path, for programs that delete files on a
// person's behalf (a sync, a web console), keeping the file count as the
// delete command does. With ifVersion "" it deletes whatever version is
// there; otherwise only the file at store version ifVersion. It never
// deletes a directory and does not retry.
//
// On failure the error is an *Error: ErrInvalidPath, ErrReadOnly,
// ErrNotMounted (on a mount table), ErrNotFile (path is a directory,
// /memories or a mount point), ErrNotFound, ErrConflict (the file is not at
// ifVersion: changed, or deleted, which a store may report either way; it
// wraps blob.ErrPrecondition), or ErrStorage.
func (h *Handler) Remove(ctx context.Context, path, ifVersion string) error {
	return h.do(ctx, &command{name: "remove", path: path, ifVersion: ifVersion}).Err
}

// Resolve validates a path exactly as the handler does (docs/spec.md "Paths": the
// /memories prefix, escapes, characters, length, reserved names) and returns
// its store key: "" for /memories itself, "notes/a.md" for
// /memories/notes/a.md. On failure err is an *Error of kind ErrInvalidPath
// whose text is the one the model would read.
//
// Resolve does not know a Handler's store, so it cannot apply the store's
// key budget (see blob.KeyBudget); the Handler's commands do.
func Resolve(path string) (key string, err error) {
	key, msg := resolve(path)
	if msg != "" {
		return "", &Error{Kind: ErrInvalidPath, Msg: msg}
	}
	if err := checkKey(key); err != nil { // not reached: resolve is stricter
		return "", &Error{Kind: ErrInvalidPath, Msg: msgChars(path), Cause: err}
	}
	return key, nil
}

// PathOf is the inverse of Resolve on a valid key: "" is "/memories",
// "notes/a.md" is "/memories/notes/a.md".
func PathOf(key string) string { return gate.PathOf(key) }

// WithActor returns a copy of ctx that names who runs the commands made
// with it (an agent, a session, user@host), for the layers that record
// changes. It is blob.WithActor.
func WithActor(ctx context.Context, actor string) context.Context {
	return blob.WithActor(ctx, actor)
}

// FileInfo describes one memory file, as Files lists it.
type FileInfo struct {
	Path     string    // the normalised path: /memories/notes/a.md
	Key      string    // its store key: notes/a.md
	Size     int64     // in bytes
	Version  string    // opaque; usable as a blob.Cond IfVersion
	Modified time.Time // as the store reports it; may be zero
}

// ReadFile returns the exact bytes of the file at path, with no line
// numbers, size or UTF-8 check (an image or any other content comes back as
// stored). It costs one Get, and one List when there is no such file.
//
// On failure the error is an *Error: ErrInvalidPath, ErrNotFile (path is a
// directory, /memories or a mount point), ErrNotFound, ErrTooLarge (the
// object is over the read limit, the larger of MaxFileBytes and
// MaxImageBytes), or ErrStorage (whose Cause is the store's error; the
// details also go to Options.Logger).
func (h *Handler) ReadFile(ctx context.Context, path string) ([]byte, error) {
	c := &command{name: "read", path: path}
	key, res, ok := h.resolve(ctx, c, path)
	switch {
	case !ok:
		return nil, res.Err
	case key == "" || h.gate.IsMountPoint(key):
		return nil, &Error{Kind: ErrNotFile, Msg: msgNotAFile(path)}
	}
	data, _, err := h.gate.Get(ctx, key)
	if err == nil {
		return data, nil
	}
	if errors.Is(err, blob.ErrTooLarge) {
		return nil, &Error{Kind: ErrTooLarge, Msg: msgTooLargeToRead(path, err)}
	}
	if !errors.Is(err, blob.ErrNotExist) {
		return nil, h.storageFailure(ctx, c, path, err).Err
	}
	isDir, err := h.gate.IsDir(ctx, key)
	switch {
	case err != nil:
		return nil, h.storageFailure(ctx, c, path, err).Err
	case isDir:
		return nil, &Error{Kind: ErrNotFile, Msg: msgNotAFile(path)}
	}
	return nil, &Error{Kind: ErrNotFound, Msg: msgNotExist(path)}
}

// Files returns every memory file under the directory dir (/memories for
// the whole store), recursively, in byte order of their keys, hidden files
// included and the storage's reserved bookkeeping keys (see
// blob.IsReserved) excluded. It costs one List, and one Stat when the
// directory is empty or missing.
//
// On failure the error is an *Error: ErrInvalidPath, ErrNotDir (dir is a
// file), ErrNotFound (no file lies under dir; never for /memories, which
// is always a directory, nor for a mount point, which is one even when its
// mount holds no file), or ErrStorage.
func (h *Handler) Files(ctx context.Context, dir string) ([]FileInfo, error) {
	c := &command{name: "files", path: dir}
	key, res, ok := h.resolve(ctx, c, dir)
	if !ok {
		return nil, res.Err
	}
	files := []FileInfo{}
	for info, err := range h.gate.List(ctx, blob.Dir(key)) {
		if err != nil {
			return nil, h.storageFailure(ctx, c, dir, err).Err
		}
		if !within(info.Key, key) {
			continue
		}
		files = append(files, FileInfo{Path: gate.PathOf(info.Key), Key: info.Key, Size: info.Size,
			Version: info.Version, Modified: info.Modified})
	}
	if len(files) > 0 || key == "" || h.gate.IsMountPoint(key) {
		return files, nil
	}
	_, err := h.gate.Stat(ctx, key)
	switch {
	case err == nil:
		return nil, &Error{Kind: ErrNotDir, Msg: msgAncestorFile(key)}
	case !errors.Is(err, blob.ErrNotExist):
		return nil, h.storageFailure(ctx, c, dir, err).Err
	}
	return nil, &Error{Kind: ErrNotFound, Msg: msgNotExist(dir)}
}

// InvalidInput returns the Result the handler gives for malformed input,
// with reason as its short reason ("Error: Invalid memory command input:
// {reason}", Err of kind ErrInvalidInput). It is for a program that refuses
// a command before it reaches the handler, for example one longer than the
// program reads, so that the model still reads the contract's wording.
func InvalidInput(reason string) Result { return errorResult(ErrInvalidInput, msgInvalidInput(reason)) }
