// Package memory executes the commands of Claude's memory tool
// (memory_20250818) against a blob.Store.
//
// The model sends view, create, str_replace, insert, delete and rename
// commands on paths under /memories; a Handler validates them, maps each path
// to a store key relative to /memories, simulates directories over the flat
// key space, and returns the exact result texts the model was trained on
// (docs/spec.md in this repository gives them string by string).
//
// # Two entry points, one behaviour
//
// Execute takes the raw JSON input of a tool_use block, as the model sends
// it. Programs (a CLI, an MCP server, sync and transfer tools) call the
// typed methods instead, which Execute is a thin decode over: View, Create,
// StrReplace, Insert, Delete and Rename take Go arguments and return exactly
// the Result Execute returns for the same command.
//
// A Result carries the model's text and, on failure, Err: an *Error whose
// Kind is one of the sentinels (ErrNotFound, ErrExists, ErrInvalidPath, ...;
// test with errors.Is) and whose Error() is the SPEC text without the
// "Error: " prefix, so no caller needs to copy or parse a SPEC text. Besides
// the commands:
//
//	Resolve(path) (key, error)     validate a path as the commands do; its store key
//	PathOf(key) string             the inverse: "notes/a.md" is /memories/notes/a.md
//	(*Handler).ReadFile(ctx, path) the exact bytes of a file (no line numbers)
//	(*Handler).Files(ctx, dir)     every memory file under dir, recursively, in key order
//	(*Handler).Write(ctx, path, data, ifVersion)  create, or replace at a version
//	(*Handler).Remove(ctx, path, ifVersion)       delete one file, at a version
//	WithActor(ctx, actor)          name who acts, for the layers that record changes
//
// # The write gate
//
// The write gate (package gate) is the one writer of memory files and the
// one place that keeps the tree's rules, and a Handler writes only through
// it: the model's commands, and Write and Remove for programs that write
// on a person's behalf (the CLI's put, rm and mv, transfer's copy and
// import, dirsync, history's restore, the MCP server). Whoever writes, the
// same rules hold with the same texts: reserved names at every
// depth, a name that is never both a file and a directory, the file size
// limit and the file limit (with the file count it keeps in the store),
// mount rules, write policies, bounded reads, and moves that complete when
// repeated. The Handler decodes, resolves paths and words the gate's
// refusals as docs/spec.md says. The store layers below the gate
// (encryption, history's recorder, prefixes, read-only, telemetry) change
// how objects are kept, never which memory files may exist.
//
// # Paths and keys
//
// The path /memories/notes/a.md is the key notes/a.md; the root /memories is
// the empty key and always a directory, never an object. A directory exists
// while some memory file lies beneath it, and a name is never both a file and
// a directory (create checks after it writes, and withdraws its write when it
// raced one that made the name both). Keys with a reserved segment
// (blob.IsReserved: .cloudmem, .cloudmem-*, at any depth) belong to the
// storage layers (for example the encryption layer's key) and are invisible:
// no listing, size or file count includes them, and no path reaches them. A
// path whose key is longer than the store holds (blob.KeyBytes: a prefixed
// store holds fewer than blob.MaxKeyLen bytes) is too long.
//
// # Storage calls
//
// Each command makes few, predictable storage calls. With no concurrent
// writer and no error, they are:
//
//	command                          calls
//	view of a file                   1 Get
//	view of a directory              1 Get (not a file) + 1 List
//	view of /memories                1 List
//	create                           1 Put(IfAbsent) and, with the file limit, 1
//	                                 Put(IfVersion) of the file count, at once (+
//	                                 1 Get of the count on a handler's first
//	                                 command at that store or mount); then the
//	                                 check for a clash: 1 List of the key's
//	                                 directory (up to a first file) and 1 Stat
//	                                 per ancestor, at once (none on a store with
//	                                 blob.Traits.ExclusiveNames): nothing that
//	                                 grows with the store
//	create, the first on a store     the probes (1 Stat of the key and 1 Stat
//	                                 per ancestor, at once, + 1 List of its
//	                                 directory) + 1 List of the whole store (or
//	                                 mount) + 1 Put of the count + 1
//	                                 Put(IfAbsent) + the check + 1 Put of the
//	                                 count (confirmed); within 16 files of the
//	                                 limit, the same with 1 Get of the count in
//	                                 place of the List of the store
//	create refused as full           the probes + 1 Get of the count; + 1 List
//	                                 of the store + 1 Put when the count
//	                                 changed since it was last listed
//	create (MaxFiles < 0)            as create, without the count's calls
//	create, overwriting a file       the probes + 1 Put(IfVersion)
//	create, on a store whose List    as above, + 1 Put per ancestor (its
//	hides keys under an object       witness) + 1 Stat (the key's witness);
//	(blob.Traits.HidesUnderObjects: MinIO)          when that witness exists (the name was
//	                                 once a directory), for a key of d
//	                                 segments d+1 Put, 1 Delete, 5d-1 Stat
//	                                 and 2 List more (settleHidden)
//	str_replace, insert              1 Get + 1 Put(IfVersion)
//	str_replace, insert on a dir     1 Get (not a file) + 1 List (is it a directory?)
//	delete of a file                 1 Delete, when the handler remembers the
//	                                 count far from the limit (as its last
//	                                 read or write of the count at that
//	                                 store or mount left it) and
//	                                 none of its deletes deleted a file
//	                                 without reading that same count; the
//	                                 handler's next create takes the file off
//	                                 the count in its own write. Else 1 Get of
//	                                 the count with it, at once (the Get first
//	                                 on a handler's first delete there, + 1
//	                                 Put when the count was just listed; none
//	                                 with MaxFiles < 0)
//	delete of a directory            1 Get of the count (+ 1 Put as for a
//	                                 file) + 1 Delete (not a file) + 1 List +
//	                                 blob.DeleteTree (on a store without it,
//	                                 List + blob.DeleteKeys: batches on a
//	                                 blob.BatchDeleter, else a Delete per file)
//	                                 + 1 List (nothing left); DeleteKeys
//	                                 instead of DeleteTree when reserved keys
//	                                 lie beneath
//	rename within the known tree     1 Rename on a store with blob.Tree;
//	                                 without it, for a file Get + List + Put +
//	                                 Delete, for a directory of n files
//	                                 Get + List (sources) + Stat + List (the
//	                                 destination) + n copies (blob.Copy: Get +
//	                                 Put, or 1 Copy on a blob.Copier) + the
//	                                 sources' deletes (1 DeleteBatch on a
//	                                 blob.BatchDeleter, else n Deletes) + 1
//	                                 List (nothing left)
//	rename elsewhere                 probes in SPEC order, then as above: Stat
//	                                 (+ List when no file) of the old path, Stat +
//	                                 List of the new one, Stat of each ancestor of
//	                                 the new path that is not one of the old's;
//	                                 on a store with blob.Traits.ExclusiveNames
//	                                 as above, the probes only after a refusal;
//	                                 under an active write policy always first,
//	                                 within the known tree too; on a store
//	                                 without ExclusiveNames, once it has
//	                                 written, the look for a create that raced
//	                                 it: 1 Stat per new ancestor outside the
//	                                 old path's, and 1 List under the new path
//	                                 (a file) or 1 Stat of it (a directory)
//	rename across two mounts         the probes first, then as above, with the
//	                                 moved files reserved in the new mount's
//	                                 count before they are copied (1 Stat of
//	                                 the source; for a directory 1 List of
//	                                 it and 1 of the destination; 1 Get of
//	                                 the count, 1 Put of the reservation and
//	                                 1 Put taking it off the pending list,
//	                                 + 1 List of the mount when it has no
//	                                 count yet) + 1 Get (+ 1 Put) of the old
//	                                 mount's count
//
// A directory view is one List however many files the directory holds. A
// rename is "within the known tree" when the new path's parent is the old
// path's parent or one of its ancestors and the new path is not inside the
// old one: the old path's existence then proves the destination's parent is a
// directory. A write that loses a race (blob.ErrPrecondition) repeats the
// command's calls on the fresh content, at most Options.Retries more times,
// after a wait sized by how long the command's calls took (see Options).
//
// # Failures
//
// Malformed input never reaches storage. A failed storage call becomes
// "Error: The memory storage failed: {cause}", where the cause is a short
// text that names no host, bucket, key or credential (see Causer); the full
// error goes to Options.Logger. A command that fails is never reported as
// done.
package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
	"github.com/cloudmem/cloudmem/policy"
)

// Default limits; see Options.
const (
	DefaultMaxFileBytes  = gate.DefaultMaxFileBytes
	DefaultMaxFiles      = gate.DefaultMaxFiles
	DefaultViewLimit     = 16_000
	DefaultMaxImageBytes = gate.DefaultMaxImageBytes
	DefaultMaxLines      = 999_999
	DefaultRetries       = gate.DefaultRetries
)

// Options configures a Handler. The zero value gives the defaults above.
type Options struct {
	// MaxFileBytes caps a memory file's size. 0 means the limit the store
	// carries (blob.Limits: a URL's max_file_bytes; on a mount table, the
	// mount's), else DefaultMaxFileBytes. Set, it holds in every mount.
	MaxFileBytes int64
	// MaxFiles caps the number of files in the store, or on a mount table
	// in each mount (hidden files count, reserved bookkeeping keys do not).
	// 0 means the limit the store carries (blob.Limits: a URL's max_files;
	// on a mount table, each mount's), else DefaultMaxFiles; negative means
	// no limit, and then create neither reads nor keeps the count. Set, it
	// holds in every mount.
	//
	// The count is kept in the store (gate/count.go), so create costs
	// nothing that grows with the store. How exact the limit is:
	//   - racing creates, in one process or many, never take the store past
	//     MaxFiles: within 16 files of the limit each reserves its place
	//     with a conditional write before it writes its file, and a recount
	//     keeps the places of creates in flight (this assumes the handlers'
	//     clocks agree within 5 minutes);
	//   - a create that crashes, fails or is withdrawn can leave the count
	//     too high; too low only by one for a create far from the limit
	//     that dies between its file's write and the count's, or whose
	//     storage fails as it withdraws its file, and, on the
	//     file store, by the count's writes far from the limit that a power
	//     loss undoes (they skip the fsyncs); a create refused as full first
	//     recounts with one listing when the count changed since its last
	//     recount (a reservation left by a crash counts for 10 minutes);
	//   - a file delete far from the limit trusts the count the handler
	//     remembers, once per version of it: when another handler filled
	//     the store and recounted it since, creates are refused as full
	//     with one place free per handler that so deleted, until the next
	//     delete that reads the count;
	//   - programs write and delete files through a Handler (Write, Remove:
	//     the cloudmem import, copy, sync and restore commands do), which
	//     keeps the count; keys put into the store by other means (a raw
	//     blob.Store write, another tool) are not counted until a create
	//     refused as full recounts, so they can take the store past the
	//     limit by as many;
	//   - a rename across two mounts reserves its files in the
	//     destination's count before it copies them, as creates do (and is
	//     refused as full when they do not fit); the source's count stays
	//     too high until a recount;
	//   - handlers with the limit off keep no count: when handlers with and
	//     without the limit share a store, the files the ones without it
	//     write count as keys written by other means.
	MaxFiles int
	// ViewLimit caps a file view's numbered lines, in Unicode code points.
	// 0 means the store's (blob.Limits: a URL's view_limit), else
	// DefaultViewLimit; negative means no truncation.
	ViewLimit int
	// MaxImageBytes caps the size of an image returned by view.
	// 0 means DefaultMaxImageBytes.
	MaxImageBytes int64
	// MaxLines is the most lines a file may have for view to show it; a
	// longer file is refused. 0 means DefaultMaxLines.
	MaxLines int
	// Retries is how many times a command that lost a race with another
	// writer is re-read and re-applied before it gives up. 0 means
	// DefaultRetries; negative means no retry. Between attempts the
	// command waits a random time that grows fourfold with each lost race
	// from two to 128 times its fastest failed attempt (1 ms to 1 s a
	// time, 4 s a wait at most), and its waits total 20 s at most: the
	// command then gives up whatever Retries says, as it does when its
	// context ends. The defaults let 64 writers of one file on an object
	// store land nearly every edit (docs/guarantees.md, "Concurrent writers").
	Retries int
	// Overwrite makes create replace an existing file instead of failing.
	Overwrite bool
	// ReadOnly refuses the writing commands. A store for which
	// blob.IsReadOnly is true is read-only whatever this says.
	ReadOnly bool
	// Logger receives the details of storage failures, which the model
	// sees only in short form. Nil means slog.Default().
	Logger *slog.Logger
	// Observer, when not nil, is told when each command starts and ends
	// and of each conflict (see Observer); package telemetry provides one.
	Observer Observer
	// Policy is the write policy applied to every write (gate/policy.go). Nil
	// means the store's (blob.Traits.Policy: a URL's secrets= and policy=;
	// on a mount table, each mount's), else none. Set, it holds in every
	// mount.
	Policy *policy.Policy
}

// Image is the content of an image file returned by view.
type Image struct {
	MediaType string // image/png, image/jpeg, image/gif or image/webp
	Data      []byte // the raw file bytes (not base64)
}

// Result is the outcome of one command: the tool_result the model receives.
type Result struct {
	// Text is the result text. Every error text starts with "Error: ".
	// It is empty when Image is set.
	Text string
	// Image is set when view returned an image instead of text.
	Image *Image
	// IsError is the tool_result's is_error flag.
	IsError bool
	// Err is nil when the command succeeded. Otherwise it is an *Error
	// whose Kind says what failed and whose Error() is Text without the
	// "Error: " prefix.
	Err error

	version string    // a file written by Write: its new store version
	changed [2]string // what Changed returns; an array, so that Results compare with ==
}

// Changed returns the paths a successful writing command changed, in their
// normalised form (/memories/notes/a.md): its path, or for rename the old
// path and the new one. A path may name a directory (delete and rename of
// a directory change every file beneath it). It returns nil for view, for
// a failed command and for a Result the Handler did not make.
func (r Result) Changed() []string {
	var out []string
	for _, p := range r.changed {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Handler executes memory commands against one store. It is safe for
// concurrent use and holds no per-file state: several Handlers (in one
// process or many) may share one store, and no update is lost, because every
// write is conditional on what the command read (see Execute).
type Handler struct {
	gate *gate.Tree // the one writer of memory files, and the tree's rules
	log  *slog.Logger
	obs  Observer // nil: none

	// The options the gate does not take, defaults applied.
	viewLimit     int // < 0: no truncation
	maxImageBytes int64
	maxLines      int
	overwrite     bool
}

// New returns a Handler over store. It returns an error when store is nil or
// when MaxFileBytes, MaxImageBytes or MaxLines is negative.
func New(store blob.Store, opts Options) (*Handler, error) {
	if store == nil {
		return nil, errors.New("memory: nil store")
	}
	switch {
	case opts.MaxFileBytes < 0:
		return nil, fmt.Errorf("memory: MaxFileBytes is %d, must not be negative", opts.MaxFileBytes)
	case opts.MaxImageBytes < 0:
		return nil, fmt.Errorf("memory: MaxImageBytes is %d, must not be negative", opts.MaxImageBytes)
	case opts.MaxLines < 0:
		return nil, fmt.Errorf("memory: MaxLines is %d, must not be negative", opts.MaxLines)
	}
	h := &Handler{
		log:           cmp.Or(opts.Logger, slog.Default()),
		obs:           opts.Observer,
		viewLimit:     cmp.Or(opts.ViewLimit, blob.TraitsOf(store).Limits.ViewLimit, DefaultViewLimit),
		maxImageBytes: cmp.Or(opts.MaxImageBytes, DefaultMaxImageBytes),
		maxLines:      cmp.Or(opts.MaxLines, DefaultMaxLines),
		overwrite:     opts.Overwrite,
	}
	gopts := gate.Options{
		MaxFileBytes:  opts.MaxFileBytes,
		MaxFiles:      opts.MaxFiles,
		MaxImageBytes: h.maxImageBytes,
		Retries:       opts.Retries,
		ReadOnly:      opts.ReadOnly,
		Policy:        opts.Policy,
		Logger:        h.log,
	}
	if h.obs != nil {
		gopts.Conflict = h.obs.CommandConflict
		if so, ok := h.obs.(SecretObserver); ok {
			gopts.SecretFound = so.SecretFound
		}
	}
	g, err := gate.New(store, gopts)
	if err != nil {
		return nil, err
	}
	h.gate = g
	return h, nil
}

// Execute runs one command. input is the raw JSON "input" object of a
// tool_use block. It never panics; malformed input yields an error Result
// (Err of kind ErrInvalidInput) and touches no storage. Otherwise it returns
// exactly what the typed method of the command (View, Create, StrReplace,
// Insert, Delete, Rename) returns for the decoded arguments.
//
// Every read-modify-write (str_replace, insert, create with Overwrite)
// commits with a conditional Put; when another writer got there first, the
// command is re-read and re-applied to the fresh content, up to
// Options.Retries times, after which the model is told to try again and
// nothing was changed. create without Overwrite never replaces a file
// another writer created a moment before. The Result tells the truth: a
// command reported done was done.
func (h *Handler) Execute(ctx context.Context, input []byte) Result {
	c, msg := decode(input, h.viewLimit)
	if msg != "" {
		return h.observed(ctx, &c, errorResult(ErrInvalidInput, msg))
	}
	return h.do(ctx, &c)
}

// do runs a decoded command: the one dispatch of Execute and the typed
// methods. A writing command on a read-only handler or store is refused
// before its paths are looked at, as SPEC orders the checks; then every
// path of the command is resolved, in the command's order.
func (h *Handler) do(ctx context.Context, c *command) (res Result) {
	if h.obs != nil {
		ctx = h.observeStart(ctx, c)
		defer func() { h.observeEnd(ctx, res) }()
	}
	if c.name != "view" && h.gate.ReadOnly() {
		return errorResult(ErrReadOnly, msgReadOnly(c.name))
	}
	if res, ok := h.resolvePaths(ctx, c); !ok {
		return res
	}
	res = h.dispatch(ctx, c)
	if !res.IsError && c.name != "view" {
		res.changed = changedBy(c)
	}
	return res
}

// changedBy returns the normalised paths a successful writing command c
// changed, for Result.Changed.
func changedBy(c *command) [2]string {
	if c.name == "rename" {
		return [2]string{gate.PathOf(c.key), gate.PathOf(c.newKey)}
	}
	return [2]string{gate.PathOf(c.key)}
}

// dispatch runs c's command.
func (h *Handler) dispatch(ctx context.Context, c *command) Result {
	switch c.name {
	case "view":
		return h.view(ctx, c)
	case "create":
		return h.create(ctx, c)
	case "str_replace":
		return h.strReplace(ctx, c)
	case "insert":
		return h.insert(ctx, c)
	case "delete":
		return h.delete(ctx, c)
	case "write":
		return h.write(ctx, c)
	case "remove":
		return h.remove(ctx, c)
	default: // "rename": decode and the typed methods make only the six
		return h.rename(ctx, c)
	}
}

// resolvePaths validates c's paths in the command's order and sets c's
// keys, or returns ok == false and the Result to return. On a mount table
// "too long" counts against the key budget of the path's own mount (a
// mount whose store is prefixed holds shorter keys).
func (h *Handler) resolvePaths(ctx context.Context, c *command) (Result, bool) {
	paths, keys := []string{c.path}, []*string{&c.key}
	if c.name == "rename" {
		paths, keys = []string{c.oldPath, c.newPath}, []*string{&c.key, &c.newKey}
	}
	mounts := h.gate.Mounts()
	for i, p := range paths {
		budget := h.gate.KeyBudget()
		if rest, ok := strings.CutPrefix(p, root); ok && mounts != nil {
			if m, ok := blob.MountOf(mounts, normalise(rest)); ok {
				budget = min(budget, len(m.Name)+1+m.KeyBudget)
			}
		}
		key, res, ok := h.resolveWithin(ctx, c, p, budget)
		if !ok {
			return res, false
		}
		*keys[i] = key
	}
	return Result{}, true
}

// resolve validates path and returns its key, or ok == false and the
// Result to return.
func (h *Handler) resolve(ctx context.Context, c *command, path string) (key string, res Result, ok bool) {
	return h.resolveWithin(ctx, c, path, h.gate.KeyBudget())
}

// resolveWithin is resolve for a key of at most budget bytes.
func (h *Handler) resolveWithin(ctx context.Context, c *command, path string, budget int) (key string, res Result, ok bool) {
	key, msg := resolveWithin(path, budget, h.viewLimit)
	if msg != "" {
		return "", errorResult(ErrInvalidPath, msg), false
	}
	if err := checkKey(key); err != nil {
		err = fmt.Errorf("memory: path validation let an invalid key through: %w", err)
		return "", h.storageFailure(ctx, c, path, err), false
	}
	return key, Result{}, true
}
