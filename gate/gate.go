// Package gate is the write gate of a memory tree: the one writer of
// memory files over a blob.Store, and the one place that keeps the rules
// that make a set of keys a valid tree.
//
// A Tree takes store keys ("notes/a.md"; "" is the root) that its caller
// validated as paths, and offers what writers need and nothing else: read
// bounded (Get), list (List, Stat, IsDir), create (Create), write at a
// version (Replace), read-modify-write (Edit), remove (Remove) and move
// (Move). Whoever calls, the same rules hold:
//
//   - reserved names (blob.IsReserved) at every depth are never written;
//   - a name is never both a file and a directory (create checks after it
//     writes and withdraws a write that raced one: clash.go);
//   - the file size limit and the file limit, with the file count kept in
//     the store (count.go);
//   - the mount rules of docs/spec.md "Mounts" (mount.go);
//   - the write policies, secrets found in what is written (policy.go);
//   - bounded reads: no Get reads more than the larger of the size limit
//     and the image limit;
//   - moves that complete when repeated after an interruption (move.go).
//
// A refusal by these rules is an *Error whose Kind is one of this
// package's sentinels and which carries what a caller needs to word it
// (keys, sizes, limits, findings); any other error is a storage failure
// and wraps the store's error. Package memory, the memory tool's handler,
// is the gate's caller: it validates paths, decodes the model's commands
// and words every result as docs/spec.md says. Programs write through a
// memory.Handler (Write, Remove), which words the same refusals the same
// way.
package gate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/policy"
)

// Default limits; see Options.
const (
	DefaultMaxFileBytes  = 100_000
	DefaultMaxFiles      = 2_000
	DefaultMaxImageBytes = 5 << 20
	DefaultRetries       = 16
)

// Options configures a Tree. The zero value gives the defaults above and
// the store's own limits and policy (blob.Traits).
type Options struct {
	// MaxFileBytes caps a memory file's size. 0 means the limit the store
	// carries (blob.Limits: a URL's max_file_bytes; on a mount table, the
	// mount's), else DefaultMaxFileBytes. Set, it holds in every mount.
	MaxFileBytes int64
	// MaxFiles caps the number of files in the store, or on a mount table
	// in each mount; 0 means the store's (blob.Limits), else
	// DefaultMaxFiles; negative means no limit. Set, it holds in every
	// mount. memory.Options.MaxFiles says how exact the limit is.
	MaxFiles int
	// MaxImageBytes is the largest image a read must return: reads are
	// bounded by the larger of it and the file size limit. 0 means
	// DefaultMaxImageBytes.
	MaxImageBytes int64
	// Retries is how many times a write that lost a race is re-read and
	// re-applied (see pacer). 0 means DefaultRetries; negative means none.
	Retries int
	// ReadOnly refuses every write (ErrReadOnly), as a store for which
	// blob.IsReadOnly is true is refused whatever this says.
	ReadOnly bool
	// Policy is the write policy of every write; nil means the store's
	// (blob.Traits.Policy; on a mount table, each mount's), else none.
	Policy *policy.Policy
	// Logger receives what the gate mends or leaves behind (a file count
	// it could not keep, a secret found). Nil means slog.Default().
	Logger *slog.Logger
	// Conflict, when not nil, is called each time a write lost a race with
	// another writer, under the operation's context; retrying reports
	// whether another attempt follows. It must return promptly.
	Conflict func(ctx context.Context, retrying bool)
	// SecretFound, when not nil, is called under the operation's context
	// once per secret a write policy finds, before anything is written;
	// it never receives the secret.
	SecretFound func(ctx context.Context, rule string, mode policy.Mode)
}

// Tree is the write gate over one store. It is safe for concurrent use and
// holds no per-file state: several Trees (in one process or many) may
// share a store, and no update is lost, because every write is conditional
// on what was read.
type Tree struct {
	store blob.Store
	log   *slog.Logger

	conflict    func(ctx context.Context, retrying bool) // nil: none
	secretFound func(ctx context.Context, rule string, mode policy.Mode)

	keyBudget     int   // the longest key the store holds: blob.KeyBytes
	maxFileBytes  int64 // a mount's may differ: maxFileBytesAt
	maxFiles      int   // < 0: no limit; a mount's may differ: maxFilesAt
	filesSet      bool  // Options.MaxFiles was set: it holds in every mount
	bytesSet      bool  // Options.MaxFileBytes was set: it holds in every mount
	maxImageBytes int64
	retries       int // >= 0
	readOnly      bool

	counts   countCache // the file counts last read or written (count.go)
	policies policies   // the write policies (policy.go)
}

// New returns a Tree over store. It returns an error when store is nil or
// when MaxFileBytes or MaxImageBytes is negative.
func New(store blob.Store, opts Options) (*Tree, error) {
	switch {
	case store == nil:
		return nil, errors.New("gate: nil store")
	case opts.MaxFileBytes < 0:
		return nil, fmt.Errorf("gate: MaxFileBytes is %d, must not be negative", opts.MaxFileBytes)
	case opts.MaxImageBytes < 0:
		return nil, fmt.Errorf("gate: MaxImageBytes is %d, must not be negative", opts.MaxImageBytes)
	}
	limits := blob.TraitsOf(store).Limits
	return &Tree{
		store:         store,
		log:           cmp.Or(opts.Logger, slog.Default()),
		conflict:      opts.Conflict,
		secretFound:   opts.SecretFound,
		keyBudget:     blob.KeyBytes(store),
		maxFileBytes:  cmp.Or(opts.MaxFileBytes, max(limits.MaxFileBytes, 0), DefaultMaxFileBytes),
		maxFiles:      cmp.Or(opts.MaxFiles, limits.MaxFiles, DefaultMaxFiles),
		filesSet:      opts.MaxFiles != 0,
		bytesSet:      opts.MaxFileBytes != 0,
		maxImageBytes: cmp.Or(opts.MaxImageBytes, DefaultMaxImageBytes),
		retries:       max(cmp.Or(opts.Retries, DefaultRetries), 0),
		readOnly:      opts.ReadOnly,
		policies:      newPolicies(store, opts.Policy),
	}, nil
}

// ReadOnly reports whether the Tree refuses every write: Options.ReadOnly,
// or a read-only store.
func (g *Tree) ReadOnly() bool { return g.readOnly || blob.IsReadOnly(g.store) }

// KeyBudget returns the longest key the store holds (blob.KeyBytes); on a
// mount table, a mount's own may be shorter (Mounts).
func (g *Tree) KeyBudget() int { return g.keyBudget }

// Mounts returns the store's mount table (blob.Mounts), nil when it has
// none.
func (g *Tree) Mounts() []blob.MountPoint { return blob.Mounts(g.store) }

// Get returns the content of the file key, read bounded by ReadLimit(key):
// a larger object fails with blob.ErrTooLarge (a *blob.TooLargeError), a
// missing one with blob.ErrNotExist, a key no memory path maps to (a
// reserved one: bookkeeping) with ErrInvalidKey. A directory is not a
// file: IsDir tells.
func (g *Tree) Get(ctx context.Context, key string) ([]byte, blob.Info, error) {
	if err := g.checkKey(key); err != nil {
		return nil, blob.Info{}, err
	}
	return g.store.Get(ctx, key, g.ReadLimit(key))
}

// Stat returns the file key's metadata, or blob.ErrNotExist, or
// ErrInvalidKey as Get does.
func (g *Tree) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := g.checkKey(key); err != nil {
		return blob.Info{}, err
	}
	return g.store.Stat(ctx, key)
}

// List yields every memory file whose key starts with prefix, in byte
// order of their keys, with the storage layers' reserved keys left out
// (IsBookkeeping, blob.IsReserved).
func (g *Tree) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		for info, err := range g.store.List(ctx, prefix) {
			if err == nil && blob.IsReserved(info.Key) {
				continue
			}
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}

// IsDir reports whether any memory file lies under the directory key:
// reserved bookkeeping keys beneath it do not make it a directory. It reads
// the listing only up to the first memory file. The root is a directory
// whether or not it holds any.
func (g *Tree) IsDir(ctx context.Context, key string) (bool, error) {
	if key == "" {
		return true, nil
	}
	for info, err := range g.store.List(ctx, key+"/") {
		if err != nil {
			return false, err
		}
		if !blob.IsReserved(info.Key) {
			return true, nil
		}
	}
	return false, nil
}

// IsMountPoint reports whether key is a mount point of the store's mount
// table (docs/spec.md "Mounts"): a directory that exists even when it
// holds no file, and never an object.
func (g *Tree) IsMountPoint(key string) bool {
	m, ok := blob.MountOf(blob.Mounts(g.store), key)
	return ok && m.Name == key
}

// Kinds of refusal. Every refusal by the tree's rules is an *Error whose
// Kind is one of these; any other error of a Tree is a storage failure.
var (
	ErrNotFound   = errors.New("gate: no such file or directory")
	ErrExists     = errors.New("gate: already exists")
	ErrNotFile    = errors.New("gate: not a file")
	ErrNotDir     = errors.New("gate: an ancestor is a file")
	ErrTooLarge   = errors.New("gate: over a size limit")
	ErrFull       = errors.New("gate: the file limit is reached")
	ErrConflict   = errors.New("gate: concurrent change")
	ErrIntoItself = errors.New("gate: move into itself")
	ErrReadOnly   = errors.New("gate: read-only")
	ErrSecret     = errors.New("gate: the text holds a secret")
	ErrMountPoint = errors.New("gate: a mount point")
	ErrRoot       = errors.New("gate: the root")
	ErrNotMounted = errors.New("gate: outside every mount point")
)

// Error is a refusal by the tree's rules: nothing was written. It carries
// what wording it needs; which fields are set depends on Kind.
type Error struct {
	// Kind is one of the Err* sentinels of this package.
	Kind error
	// Key is the key the refusal is about: the operation's own (a move's
	// old key for ErrNotFound, its new key for ErrExists), the highest
	// ancestor that is a file (ErrNotDir), the file of a directory that
	// is too large to read (ErrTooLarge), the file's new key in a move
	// (ErrSecret), or the read-only mount a move crosses (ErrReadOnly;
	// "" when the whole store or the key's own mount is read-only).
	Key string
	// Size and Limit are, for ErrTooLarge, the size in bytes (-1 when the
	// store did not say) and the limit it is over; for ErrFull, the files
	// the scope holds and its file limit.
	Size, Limit int64
	// Read is set, for ErrTooLarge, when the object was too large to read
	// rather than to write.
	Read bool
	// Secrets are the secrets a write policy found (ErrSecret).
	Secrets []policy.Finding
	// Err is what caused the refusal, when there is one: the store's
	// blob.ErrPrecondition for ErrConflict, its *blob.TooLargeError for a
	// read.
	Err error
}

func (e *Error) Error() string {
	s := e.Kind.Error()
	if e.Key != "" {
		s += fmt.Sprintf(" (%q)", e.Key)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Kind, and Err when it is set.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

// refuse returns the *Error of kind about key.
func refuse(kind error, key string) *Error { return &Error{Kind: kind, Key: key} }
