// Package blob defines the storage contract of cloudmem: a flat key space of
// byte objects with opaque versions and server-enforced conditional writes.
//
// The memory handler (package memory) simulates directories over this key
// space; backends (local directory, in-memory, S3, GCS, Azure Blob, Redis) and
// wrappers (prefix, read-only, call counting, encryption) implement it. Every
// implementation passes the conformance suite in package blob/blobtest.
//
// # Keys
//
// A key is a relative, '/'-separated name such as "notes/a.md". It is valid
// when it is non-empty, is valid UTF-8, is at most MaxKeyLen bytes long, does
// not start or end with '/', has no empty, "." or ".." segment, and contains
// no NUL byte or other C0 control character and no U+007F. Keys compare in byte
// order; List returns them in that order. Key names nothing but itself: "a"
// and "a/b" are unrelated keys to a Store, even though the memory handler
// treats "a" as a directory when "a/b" exists. Not every backend can hold
// both: blobtest's KeyAndTreeCoexist proves it for mem, GCS, Azure and the
// wrappers; a store that reports Traits.ExclusiveNames (a file system, and
// Redis, whose scripts keep the rule) refuses the second write with
// ErrPrecondition (blobtest's ExclusiveNames), and MinIO, backed by a file
// system, leaves "a/b/c" out of listings while "a/b" exists. A caller that must work on
// every backend cannot rely on holding both. CheckKey reports whether a key
// is valid; stores reject invalid keys with an error for which
// errors.Is(err, ErrInvalidKey) is true and touch nothing.
//
// # Versions and conditions
//
// Every object carries a Version: an opaque token chosen by the backend (an
// ETag, a generation, a counter). Only equality is meaningful, and every
// successful Put or Rename produces a version that differs from every earlier
// version of the same key, even when the bytes are the same.
//
// A Cond makes a Put or Delete conditional. The condition is enforced by the
// storage server itself (or under the store's own lock), never by reading
// first: of N writers racing with the same condition, exactly one succeeds.
//
// # Optional capabilities
//
// A Store may also implement four capabilities: Tree (an atomic move of a
// key or of a whole tree, and the deletion of a directory in one request),
// Locker (a per-key lock across a read-modify-write), Copier (a copy on the
// server) and BatchDeleter (many objects in few requests, each
// unconditionally or at a version). The package functions Rename, DeleteTree,
// Lock, Copy and DeleteBatch use the capability when the store has it and fall
// back to the five core methods otherwise, so callers never need to test for
// them. What a store says about itself without a storage call is one value,
// Traits (see TraitsReporter): with the four capabilities, five optional
// interfaces in all.
//
// # Closing
//
// A store that holds resources (connections, clients) implements io.Closer.
// The wrappers in this package forward Close to the store they wrap; Close
// reports whether s needs and supports closing and closes it.
//
// # Errors
//
// Errors returned by stores wrap one of the sentinel errors below where one
// applies, and keep the underlying SDK error reachable with errors.As.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"time"
	"unicode/utf8"
)

// MaxKeyLen is the longest valid key, in bytes.
const MaxKeyLen = 1024

// Sentinel errors. Test for them with errors.Is.
var (
	// ErrNotExist means the key (or, for tree operations, every key under
	// the prefix) does not exist.
	ErrNotExist = errors.New("blob: object does not exist")
	// ErrPrecondition means a Cond did not hold: the key existed for
	// IfAbsent, or its version differed (or it was missing) for IfVersion.
	// Rename also returns it when the destination exists.
	ErrPrecondition = errors.New("blob: precondition failed")
	// ErrInvalidKey means a key or prefix broke the grammar in the package
	// documentation. Nothing was read or written.
	ErrInvalidKey = errors.New("blob: invalid key")
	// ErrReadOnly means the store refuses writes.
	ErrReadOnly = errors.New("blob: store is read-only")
)

// Info describes one stored object.
type Info struct {
	Key      string    // the object's key
	Size     int64     // length of the data in bytes
	Version  string    // opaque; changes on every write
	Modified time.Time // last write, as reported by the backend; may be zero
}

// Cond is a precondition for Put and Delete. The zero value means
// unconditional. At most one of the fields may be set.
type Cond struct {
	// IfAbsent makes the call succeed only when the key does not exist.
	IfAbsent bool
	// IfVersion makes the call succeed only when the key exists with this
	// exact version.
	IfVersion string
}

// Validate reports an error when both fields are set.
func (c Cond) Validate() error {
	if c.IfAbsent && c.IfVersion != "" {
		return errors.New("blob: Cond sets both IfAbsent and IfVersion")
	}
	return nil
}

// Store is a flat key space of versioned byte objects.
//
// Implementations are safe for concurrent use by multiple goroutines (and,
// where the backend is shared, by multiple processes). Every method returns
// promptly with ctx.Err() (possibly wrapped) once ctx is done. After any
// error, the object is either entirely as it was or entirely as requested:
// no store exposes a partially written object.
type Store interface {
	// Get returns the object's data and Info. For a missing key it returns
	// an error for which errors.Is(err, ErrNotExist) is true.
	//
	// limit bounds the read: Get never reads more than limit+1 bytes of the
	// object from storage, and for an object larger than limit it returns a
	// *TooLargeError (errors.Is(err, ErrTooLarge) is true) that carries the
	// object's size when the backend reports it before the data. An object
	// of exactly limit bytes is returned. A limit <= 0 is invalid (it never
	// means "unlimited"): Get returns an error wrapping ErrInvalidLimit and
	// reads nothing. A caller that needs whole objects passes
	// MaxObjectBytes.
	Get(ctx context.Context, key string, limit int64) ([]byte, Info, error)

	// Stat returns the object's Info without its data, with the same errors
	// as Get.
	Stat(ctx context.Context, key string) (Info, error)

	// Put stores data under key, replacing any previous object, if c holds,
	// and returns the new object's Info. When c does not hold it returns an
	// error for which errors.Is(err, ErrPrecondition) is true and changes
	// nothing.
	Put(ctx context.Context, key string, data []byte, c Cond) (Info, error)

	// Delete removes the object if c holds. A missing key returns ErrNotExist
	// for the zero Cond and for IfVersion the backend may report either
	// ErrNotExist or ErrPrecondition. IfAbsent can never hold for a Delete:
	// it fails with ErrPrecondition whether or not the key exists, and
	// touches nothing (CheckDelete, every backend's preamble, says so).
	Delete(ctx context.Context, key string, c Cond) error

	// List yields the Info of every key that starts with prefix (a plain
	// string prefix: "a/" lists the tree under a, "a" also yields "a",
	// "ab" and "a/b"), recursively, in byte order of the keys. An empty prefix
	// lists the whole store. The empty prefix and prefixes ending in '/' are
	// valid; otherwise the prefix must be a valid key. A listed Version
	// works as an IfVersion condition, but may be spelled differently from
	// the one Get and Stat report (S3 listings carry no metadata, so they
	// report the bare ETag). On failure it yields
	// one non-nil error and stops. The listing reflects a recent state of the
	// store; keys written or deleted while it runs may or may not appear.
	List(ctx context.Context, prefix string) iter.Seq2[Info, error]
}

// CheckKey returns nil when key is valid (see the package documentation),
// and otherwise an error wrapping ErrInvalidKey that names the problem.
func CheckKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: %d bytes, over %d", ErrInvalidKey, len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not UTF-8", ErrInvalidKey)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: control character at byte %d", ErrInvalidKey, i)
		}
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return fmt.Errorf("%w: empty segment", ErrInvalidKey)
		case ".", "..":
			return fmt.Errorf("%w: %q segment", ErrInvalidKey, seg)
		}
	}
	return nil
}

// CheckPrefix returns nil when prefix is valid for List: empty, a valid key,
// or a valid key followed by '/'.
func CheckPrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return CheckKey(strings.TrimSuffix(prefix, "/"))
}

// Dir returns the prefix that lists the tree under the directory key dir:
// "" for the root (dir == ""), dir+"/" otherwise.
func Dir(dir string) string {
	if dir == "" {
		return ""
	}
	return dir + "/"
}

// Close closes s if it implements io.Closer, and otherwise does nothing.
func Close(s Store) error {
	if c, ok := s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// ListAll collects a listing into a slice. It is meant for small listings
// and tests; it stops at the first error.
func ListAll(ctx context.Context, s Store, prefix string) ([]Info, error) {
	var out []Info
	for info, err := range s.List(ctx, prefix) {
		if err != nil {
			return out, err
		}
		out = append(out, info)
	}
	return out, nil
}

// Keys returns the keys of infos, in their order.
func Keys(infos []Info) []string {
	keys := make([]string, len(infos))
	for i, info := range infos {
		keys[i] = info.Key
	}
	return keys
}
