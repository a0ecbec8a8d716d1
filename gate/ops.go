package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/policy"
)

// The writes. Each checks, in docs/spec.md's order: read-only, the key,
// the mount rules, the root, then its own rules; a refusal is an *Error
// and writes nothing.

// Written is what a write did: a value the caller owns.
type Written struct {
	// Version is the file's new store version (blob.Info.Version).
	Version string
	// Redacted are the secrets a redact policy replaced in what was
	// written (policy.Redacted); nil when none.
	Redacted []policy.Finding
}

// Create writes data as a new file at key: no file or directory may be
// there (with overwrite, a file may, and is replaced), no ancestor may be
// a file, and the write policy, the size limit and the file limit apply;
// the new file is counted. It retries a race lost to another writer (see
// Options.Retries), and never replaces a file another writer created a
// moment before (unless overwrite).
//
// Refusals: ErrReadOnly, ErrNotMounted, ErrExists, ErrRoot, ErrSecret,
// ErrNotDir (Key: the ancestor), ErrTooLarge, ErrFull, ErrConflict.
func (g *Tree) Create(ctx context.Context, key string, data []byte, overwrite bool) (Written, error) {
	if err := g.checkWrite(opCreate, key); err != nil {
		return Written{}, err
	}
	ctx, data, redacted, err := g.screen(ctx, key, data)
	if err != nil {
		return Written{}, err
	}
	version, err := g.createFile(ctx, key, data, overwrite)
	if err != nil {
		return Written{}, err
	}
	return Written{Version: version, Redacted: redacted}, nil
}

// Replace writes data as the whole content of the file key, which must
// still be at the store version ifVersion; the write policy and the size
// limit apply. It does not retry: a file not at ifVersion (changed,
// deleted or never there) is ErrConflict, wrapping blob.ErrPrecondition.
//
// Refusals: ErrReadOnly, ErrNotMounted, ErrExists (a mount point), ErrRoot,
// ErrSecret, ErrTooLarge, ErrConflict.
func (g *Tree) Replace(ctx context.Context, key string, data []byte, ifVersion string) (Written, error) {
	if ifVersion == "" {
		return Written{}, errors.New("gate: Replace needs the version to replace")
	}
	if err := g.checkWrite(opCreate, key); err != nil {
		return Written{}, err
	}
	ctx, data, redacted, err := g.screen(ctx, key, data)
	if err != nil {
		return Written{}, err
	}
	if err := g.tooLarge(key, data); err != nil {
		return Written{}, err
	}
	put, err := g.store.Put(ctx, key, data, blob.Cond{IfVersion: ifVersion})
	switch {
	case errors.Is(err, blob.ErrPrecondition):
		return Written{}, &Error{Kind: ErrConflict, Key: key, Err: err}
	case err != nil:
		return Written{}, err
	}
	return Written{Version: put.Version, Redacted: redacted}, nil
}

// Edited is what Edit did: a value the caller owns (the Tree keeps no
// reference to Read or Content).
type Edited struct {
	Written
	// Read is the content the edit was applied to, and Content the
	// content written (the edit's, with any secrets redacted).
	Read, Content []byte
}

// Edit is a read-modify-write of the file key: it reads the file (bounded
// as Get is), calls apply on its content, and writes what apply
// returns, conditional on the version read; when another writer got there
// first, it reads and applies again (see Options.Retries). An error from
// apply ends the edit, unwritten, and is returned as it is. apply may run
// more than once, and must not modify content (Edited.Read is it). The write
// policy and the size limit apply to what apply returns. Writers of one
// file take turns where the store can lock a key (blob.Lock).
//
// Refusals: ErrReadOnly, ErrNotMounted, ErrNotFile (a directory or a
// mount point), ErrRoot, ErrNotFound, ErrTooLarge (Read set: the file is
// over the read limit), ErrSecret, ErrConflict.
func (g *Tree) Edit(ctx context.Context, key string, apply func(content []byte) ([]byte, error)) (Edited, error) {
	if err := g.checkWrite(opEdit, key); err != nil {
		return Edited{}, err
	}
	unlock, err := blob.Lock(ctx, g.store, key)
	if err != nil {
		return Edited{}, err
	}
	defer unlock()
	var (
		done   Edited
		failed error // the last attempt's failure
	)
	err = g.retry(ctx, key, func() (lost bool) {
		done, lost, failed = g.editOnce(ctx, key, apply)
		return lost
	})
	if err = cmp.Or(err, failed); err != nil {
		return Edited{}, err
	}
	return done, nil
}

// editOnce is one attempt of Edit. lost reports a race lost to another
// writer.
func (g *Tree) editOnce(ctx context.Context, key string, apply func([]byte) ([]byte, error)) (done Edited, lost bool, err error) {
	content, info, err := g.store.Get(ctx, key, g.readLimit(key))
	switch {
	case errors.Is(err, blob.ErrTooLarge):
		return done, false, tooLargeToRead(key, err)
	case errors.Is(err, blob.ErrNotExist):
		isDir, err := g.isDir(ctx, key)
		switch {
		case err != nil:
			return done, false, err
		case isDir:
			return done, false, refuse(ErrNotFile, key)
		}
		return done, false, refuse(ErrNotFound, key)
	case err != nil:
		return done, false, err
	}
	updated, err := apply(content)
	if err != nil {
		return done, false, err
	}
	ctx, updated, redacted, err := g.screen(ctx, key, updated)
	if err != nil {
		return done, false, err
	}
	if err := g.tooLarge(key, updated); err != nil {
		return done, false, err
	}
	put, err := g.store.Put(ctx, key, updated, blob.Cond{IfVersion: info.Version})
	switch {
	case errors.Is(err, blob.ErrPrecondition):
		return done, true, nil
	case err != nil:
		return done, false, err
	}
	return Edited{Written: Written{Version: put.Version, Redacted: redacted}, Read: content, Content: updated}, false, nil
}

// Remove deletes the file key, if cond holds, and keeps the file count.
// With dirs, when there is no such file, it deletes the directory key
// with every memory file beneath it (a List, blob.DeleteTree, and a List
// that proves nothing is left); without, it never deletes a directory. It
// does not retry. A condition covers one file, never a directory: with
// dirs, cond must be the zero Cond (else Remove fails, deleting nothing),
// so that a file replaced meanwhile by a directory is not deleted in its
// place.
//
// Refusals: ErrReadOnly, ErrNotMounted, ErrMountPoint (with dirs) or
// ErrNotFile (without: a mount point or a directory), ErrRoot,
// ErrNotFound, ErrConflict (not at cond's version: changed, or deleted,
// which a store may report either way; it wraps blob.ErrPrecondition).
func (g *Tree) Remove(ctx context.Context, key string, cond blob.Cond, dirs bool) error {
	o := opEdit
	if dirs {
		if cond != (blob.Cond{}) {
			return errors.New("gate: Remove of a directory takes no condition")
		}
		o = opDelete
	}
	if err := g.checkWrite(o, key); err != nil {
		return err
	}
	return g.deleteKey(ctx, key, cond, dirs)
}

// Move moves the file or directory oldKey to newKey, which must not exist,
// through blob.Rename: atomic on stores with blob.Tree, otherwise copies
// before it deletes, so that every file is always at its old key, its new
// key or both. A directory move interrupted at any point is completed by
// the same move made again. The write policies of the destination apply
// to every file moved.
//
// Refusals, in docs/spec.md's order: ErrReadOnly (Key: a read-only mount
// the move crosses, or ""), ErrNotMounted, ErrMountPoint, ErrRoot (oldKey
// is the root), ErrNotFound (Key: oldKey), ErrExists (Key: newKey),
// ErrIntoItself, ErrNotDir (Key: the ancestor of newKey that is a file),
// ErrSecret (Key: a file's new key), ErrTooLarge (Read set; Key: the file
// over the read limit, on a store that moves by copying).
func (g *Tree) Move(ctx context.Context, oldKey, newKey string) error {
	if g.ReadOnly() {
		return refuse(ErrReadOnly, "")
	}
	if err := errors.Join(g.checkKey(oldKey), g.checkKey(newKey)); err != nil {
		return err
	}
	if err := g.checkMountedMove(oldKey, newKey); err != nil {
		return err
	}
	if oldKey == "" {
		return refuse(ErrRoot, oldKey)
	}
	return g.rename(ctx, oldKey, newKey)
}

// checkWrite makes the checks every write of one key makes first, in
// docs/spec.md's order: the store is writable, key is a valid key, the
// mount rules, and key is not the root.
func (g *Tree) checkWrite(o op, key string) error {
	if g.ReadOnly() {
		return refuse(ErrReadOnly, "")
	}
	if err := g.checkKey(key); err != nil {
		return err
	}
	if err := g.checkMount(o, key); err != nil {
		return err
	}
	if key == "" {
		return refuse(ErrRoot, key)
	}
	return nil
}

// ErrInvalidKey is the failure of an operation given a key no memory path
// maps to: one the store rejects (blob.CheckKey), one with a reserved
// segment (blob.IsReserved), or one longer than the store holds
// (KeyBudget; on a mount table, the key's own mount). A caller that
// validates paths never meets it.
var ErrInvalidKey = errors.New("gate: not a memory file's key")

// checkKey checks that key ("" is the root) is one a memory path maps to:
// on a mount table, within the key budget of its own mount (a prefixed
// store holds shorter keys than the table's longest).
func (g *Tree) checkKey(key string) error {
	budget := g.keyBudget
	if m, ok := blob.MountOf(blob.Mounts(g.store), key); ok {
		budget = min(budget, len(m.Name)+1+m.KeyBudget)
	}
	switch {
	case key == "":
		return nil
	case blob.IsReserved(key) || len(key) > budget || strings.HasPrefix(key, "/"):
		return fmt.Errorf("%w: %q", ErrInvalidKey, key)
	}
	if err := blob.CheckKey(key); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	return nil
}

// tooLargeToRead is the refusal of a read of key, or of a file beneath it,
// that the store found over the read limit (err wraps a
// *blob.TooLargeError, whose Key names the file).
func tooLargeToRead(key string, err error) *Error {
	e := &Error{Kind: ErrTooLarge, Key: key, Size: -1, Read: true, Err: err}
	if tl, ok := errors.AsType[*blob.TooLargeError](err); ok {
		if tl.Key != key {
			e.Key = tl.Key // a file of the directory
		}
		e.Size, e.Limit = tl.Size, tl.Limit
	}
	return e
}

// PathOf returns the memory path of key: "" is "/memories", "notes/a.md" is
// "/memories/notes/a.md". Write policies match it; the memory tool's
// handler shows it.
func PathOf(key string) string {
	if key == "" {
		return "/memories"
	}
	return "/memories/" + key
}

// parent returns the key of the directory holding key ("" for the root).
func parent(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return ""
}

// within reports whether key lies strictly under the directory dir.
func within(key, dir string) bool {
	if dir == "" {
		return key != ""
	}
	return len(key) > len(dir) && key[len(dir)] == '/' && strings.HasPrefix(key, dir)
}
