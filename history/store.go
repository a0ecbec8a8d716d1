package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// Op is the operation a version records.
type Op string

// The operations.
const (
	OpCreated  Op = "created"  // the path did not exist before
	OpModified Op = "modified" // the path's content was replaced
	OpDeleted  Op = "deleted"  // the path was removed
	OpRenamed  Op = "renamed"  // the file moved to Path from From
	// OpRedacted is the operation of an Audit event that erased the
	// content of an earlier version (no version has it).
	OpRedacted Op = "redacted"
	// OpUnrecorded marks the synthetic last entry of a History whose path's
	// current state has no record: it existed before history was turned
	// on, or was changed around the Store (or by a process that died
	// between the change and its record). It has no ID.
	OpUnrecorded Op = "unrecorded"
)

// Sentinel errors. Test for them with errors.Is.
var (
	// ErrUnrecorded means a change landed in the store but its version
	// record could not be written; the change is not acknowledged.
	ErrUnrecorded = errors.New("history: the change was stored but its version record was not")
	// ErrUnknownVersion means no version of the path has the given id.
	ErrUnknownVersion = errors.New("history: no such version")
	// ErrBadRef means a PATH@VERSION reference does not parse.
	ErrBadRef = errors.New("history: malformed PATH@VERSION")
	// ErrNoContent means the version has no content to show or restore:
	// it is a deletion, or it was redacted.
	ErrNoContent = errors.New("history: the version has no content")
	// ErrCurrentVersion means the version is the path's current content,
	// which Redact refuses to erase.
	ErrCurrentVersion = errors.New("history: the version is the file's current content")
)

// Options configures a Store. The zero value (or nil) records every change
// with no default actor and keeps every version.
type Options struct {
	// Actor names who makes the changes when the context carries no actor
	// (blob.WithActor). Empty means unknown.
	Actor string
	// Keep, when positive, lets Prune remove all but the last Keep
	// versions of each path (subject to MaxAge). Negative is an error.
	Keep int
	// MaxAge, when positive, lets Prune remove versions older than MaxAge
	// (subject to Keep: with both set, a version goes when it is beyond
	// the last Keep and older than MaxAge). Negative is an error.
	MaxAge time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives the details of failures; nil means slog.Default().
	Logger *slog.Logger
}

// Store is a blob.Store that records every change made through it as a
// version (see the package documentation). It is safe for concurrent use
// when the inner store is, and by several processes sharing one inner
// store.
type Store struct {
	inner  blob.Store
	actor  string
	keep   int
	maxAge time.Duration
	now    func() time.Time
	log    *slog.Logger
}

var (
	_ blob.Store  = (*Store)(nil)
	_ blob.Tree   = (*Store)(nil)
	_ blob.Locker = (*Store)(nil)
	_ io.Closer   = (*Store)(nil)
)

// New returns a Store that records the changes made through it in inner.
// opts may be nil. It makes no storage call.
func New(inner blob.Store, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Keep < 0 {
		return nil, fmt.Errorf("history: Keep is %d, want 0 or more", o.Keep)
	}
	if o.MaxAge < 0 {
		return nil, fmt.Errorf("history: MaxAge is %v, want 0 or more", o.MaxAge)
	}
	if blob.Mounts(inner) != nil {
		return nil, errors.New("history: the store is a mount table: turn history on in each mounted store instead")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Store{inner: inner, actor: o.Actor, keep: o.Keep, maxAge: o.MaxAge, now: o.Now, log: o.Logger}, nil
}

// casRetries bounds how often an unconditional Put or Delete re-reads the
// version it conditions itself on.
const casRetries = 8

// recordTimeout bounds the write of a record after its change landed. The
// write ignores the caller's cancellation: the change is already stored.
const recordTimeout = 30 * time.Second

// inNamespace reports whether key or prefix reaches the version records.
func inNamespace(key string) bool {
	return strings.HasPrefix(key+"/", Namespace)
}

// check validates a key of a call made through the Store.
func check(key string) error {
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	if inNamespace(key) {
		return fmt.Errorf("%w: %q is reserved for the version records", blob.ErrInvalidKey, key)
	}
	return nil
}

// recorded reports whether changes to key get version records: every key
// outside the reserved names (bookkeeping of the layers below is not a
// memory).
func recorded(key string) bool { return !blob.IsReserved(key) }

// Get returns the object at key from the inner store, with the semantics
// of blob.Store's Get. It writes nothing.
func (s *Store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if err := check(key); err != nil {
		return nil, blob.Info{}, err
	}
	return s.inner.Get(ctx, key, limit)
}

// Stat returns the Info of the object at key. It writes nothing.
func (s *Store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := check(key); err != nil {
		return blob.Info{}, err
	}
	return s.inner.Stat(ctx, key)
}

// List lists the inner store, without the version records.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		if err := blob.CheckPrefix(prefix); err != nil {
			yield(blob.Info{}, err)
			return
		}
		if inNamespace(strings.TrimSuffix(prefix, "/")) {
			return
		}
		for info, err := range s.inner.List(ctx, prefix) {
			if err == nil && inNamespace(info.Key) {
				continue
			}
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}

// Put stores data at key and then writes its version record. An
// unconditional Put first reads the current version (one Stat) and writes
// conditionally on it, so that the record knows what it replaced; it
// retries when another writer got in between. A write refused twice at
// the same version was refused for another reason than a race (a name
// that is a directory, on a store with blob.Traits.ExclusiveNames): that
// refusal is its answer.
func (s *Store) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if err := check(key); err != nil {
		return blob.Info{}, err
	}
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	if !recorded(key) {
		return s.inner.Put(ctx, key, data, c)
	}
	if c.IfAbsent || c.IfVersion != "" {
		info, _, err := s.put(ctx, key, data, c)
		return info, err
	}
	var refused *blob.Cond
	for range casRetries {
		cond, err := s.currentCond(ctx, key)
		if err != nil {
			return blob.Info{}, err
		}
		info, _, err := s.put(ctx, key, data, cond)
		if !errors.Is(err, blob.ErrPrecondition) || refused != nil && *refused == cond {
			return info, err
		}
		refused = &cond
	}
	return blob.Info{}, fmt.Errorf("history: %q kept changing during an unconditional write; nothing was written", key)
}

// currentCond returns the condition that holds for key right now.
func (s *Store) currentCond(ctx context.Context, key string) (blob.Cond, error) {
	info, err := s.inner.Stat(ctx, key)
	switch {
	case err == nil:
		return blob.Cond{IfVersion: info.Version}, nil
	case errors.Is(err, blob.ErrNotExist):
		return blob.Cond{IfAbsent: true}, nil
	}
	return blob.Cond{}, err
}

// put is a conditional Put and its record, which it returns.
func (s *Store) put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, header, error) {
	info, err := s.inner.Put(ctx, key, data, c)
	if err != nil {
		return info, header{}, err
	}
	if m := blob.MoveOf(ctx); m != nil && movedCopy(m, key, c) {
		// A move's copy, or the newer content of its source carried over:
		// the source's delete records the move (see del).
		m.Note(copyNote{key}, copied{version: info.Version, data: data})
		return info, header{}, nil
	}
	op := OpModified
	if c.IfAbsent {
		op = OpCreated
	}
	h := header{Op: op, Path: key, Prev: c.IfVersion, Ver: info.Version,
		Size: int64(len(data)), SHA256: sum256(data), RestoredFrom: restoredFrom(ctx)}
	err = s.record(ctx, &h, data)
	if r, ok := ctx.Value(restoredKey{}).(*restoring); ok && err == nil && key == r.key {
		r.header = h
	}
	return info, h, err
}

// Delete removes key and then writes its version record. An unconditional
// Delete first reads the current version (one Stat) and deletes
// conditionally on it, retrying when another writer got in between.
func (s *Store) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := check(key); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if !recorded(key) || c.IfAbsent { // IfAbsent never deletes anything
		return s.inner.Delete(ctx, key, c)
	}
	if c.IfVersion != "" {
		return s.del(ctx, key, c.IfVersion)
	}
	for range casRetries {
		info, err := s.inner.Stat(ctx, key)
		if err != nil {
			return err
		}
		err = s.del(ctx, key, info.Version)
		if !errors.Is(err, blob.ErrPrecondition) {
			return err
		}
	}
	return fmt.Errorf("history: %q kept changing during an unconditional delete; nothing was deleted", key)
}

// del is a conditional Delete and its record.
func (s *Store) del(ctx context.Context, key, version string) error {
	m := blob.MoveOf(ctx)
	if m != nil {
		if _, ok := m.Source(key); ok {
			if n, ok := m.Take(copyNote{key}); ok && n.(copied).version == version {
				// A failed move takes back its unrecorded copy.
				return s.inner.Delete(ctx, key, blob.Cond{IfVersion: version})
			}
		}
	}
	if err := s.inner.Delete(ctx, key, blob.Cond{IfVersion: version}); err != nil {
		return err
	}
	if m != nil {
		if to, ok := m.Dest(key); ok && recorded(to) {
			return s.recordMove(ctx, m, key, version, to)
		}
	}
	h := header{Op: OpDeleted, Path: key, Prev: version}
	return s.record(ctx, &h, nil)
}

// copyNote is the blob.Move note of a move's copy at key, which the delete
// of its source records; copied is what it holds.
type copyNote struct{ key string }

type copied struct {
	version string
	data    []byte
}

// movedCopy reports whether a Put of key with c, made during the move m,
// writes the copy of a recorded source (IfAbsent) or carries the newer
// content of the source over to a copy not recorded yet (IfVersion).
func movedCopy(m *blob.Move, key string, c blob.Cond) bool {
	from, ok := m.Source(key)
	if !ok || !recorded(from) {
		return false
	}
	if c.IfAbsent {
		return true
	}
	n, ok := m.Take(copyNote{key})
	if ok {
		m.Note(copyNote{key}, n) // put back; put replaces it
	}
	return ok && n.(copied).version == c.IfVersion
}

// recordMove records the move of the source from, whose version was just
// deleted, to the key to: one "renamed" record, with the content of the
// copy this process wrote during the move, or, when the copy is older (a
// move interrupted and sent again), with what to holds now. A copy that is
// gone meanwhile leaves a "deleted" record of the source.
func (s *Store) recordMove(ctx context.Context, m *blob.Move, from, version, to string) error {
	h := header{Op: OpRenamed, Path: to, From: from, Prev: version}
	var data []byte
	if n, ok := m.Take(copyNote{to}); ok {
		data, h.Ver = n.(copied).data, n.(copied).version
	} else {
		d, info, err := s.inner.Get(context.WithoutCancel(ctx), to, blob.MaxObjectBytes)
		switch {
		case errors.Is(err, blob.ErrNotExist):
			h = header{Op: OpDeleted, Path: from, Prev: version}
		case err != nil:
			s.log.Error("history: a move's source was deleted but its copy could not be read for its record", "err", err)
			return fmt.Errorf("%w: %w", ErrUnrecorded, err)
		default:
			data, h.Ver = d, info.Version
		}
	}
	if h.Op == OpRenamed {
		h.Size, h.SHA256 = int64(len(data)), sum256(data)
	}
	return s.record(ctx, &h, data)
}

// actorOf returns the actor of ctx, or the store's default.
func (s *Store) actorOf(ctx context.Context) string {
	if a := blob.Actor(ctx); a != "" {
		return a
	}
	return s.actor
}

// record writes the version record h (with content) for a change that has
// landed. It fills in the id, time and actor. It is the one extra storage
// write of a change; it retries only when its fresh id is taken.
func (s *Store) record(ctx context.Context, h *header, content []byte) error {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	h.Format = recordFormat
	h.Actor = s.actorOf(ctx)
	if h.Op != OpDeleted {
		h.Policy = blob.PolicyAction(ctx)
	}
	var err error
	for range 3 {
		now := s.now()
		h.ID, h.Time = newID(now), now.UTC()
		key := recordKey(h.Path, h.ID, h.From)
		var body []byte
		if body, err = encodeRecord(h, content); err != nil {
			return err
		}
		if _, err = s.inner.Put(wctx, key, body, blob.Cond{IfAbsent: true}); err == nil {
			return nil
		}
		if !errors.Is(err, blob.ErrPrecondition) {
			break
		}
		// Either a retry of this very write that had landed (then the
		// object is ours), or an id taken by another record.
		if got, _, gerr := s.inner.Get(wctx, key, int64(len(body))); gerr == nil && bytes.Equal(got, body) {
			return nil
		}
	}
	s.log.Error("history: a change was stored but its version record was not", "op", h.Op, "err", err)
	if errors.Is(err, blob.ErrPrecondition) {
		// Never let a caller read this as a lost race: its change landed.
		return fmt.Errorf("%w: %v", ErrUnrecorded, err)
	}
	return fmt.Errorf("%w: %w", ErrUnrecorded, err)
}

// Traits are the inner store's, with RecordsWrites: the records' own keys
// are short and fixed, so the Store takes nothing from the keys its
// callers may use, and List leaves the inner store's keys as it lists
// them, dropping only the records (so the memory handler runs the create
// protocol a MinIO store needs through the Store too).
func (s *Store) Traits() blob.Traits {
	t := blob.TraitsOf(s.inner)
	t.RecordsWrites = true
	return t
}

// Lock takes the inner store's lock on key (see blob.Locker): a lock is
// not a change, so it is forwarded unrecorded. It answers
// errors.ErrUnsupported when the inner store has no locks.
func (s *Store) Lock(ctx context.Context, key string) (func(), error) {
	if err := check(key); err != nil {
		return nil, err
	}
	l, ok := s.inner.(blob.Locker)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return l.Lock(ctx, key)
}

// Close closes the inner store.
func (s *Store) Close() error { return blob.Close(s.inner) }

// restoredKey is the context key under which Restore passes a *restoring
// to the Put of its write.
type restoredKey struct{}

// restoring is a restore in progress: the key and the version id it
// restores, and the header of the record its write got.
type restoring struct {
	key, id string
	header  header
}

func restoredFrom(ctx context.Context) string {
	if r, ok := ctx.Value(restoredKey{}).(*restoring); ok {
		return r.id
	}
	return ""
}
