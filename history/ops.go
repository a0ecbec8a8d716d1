package history

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// A WriteFunc writes data as the whole content of the file at key through
// the rules of the memory tree (the file limit, the size limit, files and
// directories apart): with ifVersion "" the file must not exist, otherwise
// it must be at the store version ifVersion. A file in another state is an
// error wrapping blob.ErrPrecondition, and nothing is written. A memory
// handler's Write, given the path of key (memory.PathOf), is one.
type WriteFunc func(ctx context.Context, key string, data []byte, ifVersion string) error

// Restore writes the content of version id back to the file at key through
// write, as a new change with its own version (its RestoredFrom is id), and
// returns that version. write must write through this Store (a memory
// handler over it), so that the change is recorded. The write is
// conditional on the state Restore read: when another writer changes the
// file meanwhile, it returns an error wrapping blob.ErrPrecondition and
// nothing is written. It restores onto a deleted file too. It changes
// nothing and returns an error wrapping ErrNoContent for a deletion or a
// redacted version, ErrUnknownVersion for an id not in the file's history,
// and write's own error when the write breaks a rule of the tree (the file
// limit, a directory at key).
func (s *Store) Restore(ctx context.Context, key, id string, write WriteFunc) (Version, error) {
	r, _, _, err := s.find(ctx, key, id)
	if err != nil {
		return Version{}, err
	}
	if !r.hasContent() {
		return Version{}, fmt.Errorf("%w: version %s is %s; restore an earlier version", ErrNoContent, id, describe(r))
	}
	cond, err := s.currentCond(ctx, key)
	if err != nil {
		return Version{}, err
	}
	rs := &restoring{key: key, id: id}
	err = write(context.WithValue(ctx, restoredKey{}, rs), key, r.content, cond.IfVersion)
	if errors.Is(err, blob.ErrPrecondition) {
		return Version{}, fmt.Errorf("history: %q changed while it was being restored; nothing was restored: %w", key, err)
	}
	if err != nil {
		return Version{}, err
	}
	if rs.header.ID == "" {
		return Version{}, fmt.Errorf("history: %q was restored through a store other than this one, so the restore has no version record", key)
	}
	v := (&record{header: rs.header}).toVersion()
	v.Current = true
	return v, nil
}

func next(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// Redact erases the content of version id of the file at key, and of
// every other version in the file's history with the same content (the
// same SHA-256: a rename carries its file's content, a restore repeats an
// old one), from every record that stores it, rewriting each record in
// place (the inner store's object is replaced, so with encryption below,
// the old ciphertext object is gone too). The records stay, with their
// operation, time and actor. Nothing derived from the content stays:
// their SHA-256 and size are erased (a short secret can be guessed from
// its hash, and its length narrows the guess), and so is the store
// version the content had (on S3 the ETag, its MD5), in these records and
// in the records of the next changes, which name it as the version they
// replaced. Redacted says who (the
// context's actor, or the store's default) and when. It returns the
// versions it redacted; a version already redacted is returned unchanged.
//
// It refuses, changing nothing, with an error wrapping ErrCurrentVersion
// when the file's current content is that content (erasing it from the
// history would leave it in the file: change or delete the file first),
// ErrNoContent for a deletion, and ErrUnknownVersion for an id not in the
// file's history.
//
// Other content that merely contains the same text (a later edit that kept
// the line) is another version's content: redact it too. A Redact that
// fails midway (the error says which version) leaves the records it had
// rewritten redacted; run it again to finish.
func (s *Store) Redact(ctx context.Context, key, id string) ([]Version, error) {
	r, vs, recs, err := s.find(ctx, key, id)
	if err != nil {
		return nil, err
	}
	if r.Op == OpDeleted {
		return nil, fmt.Errorf("%w: version %s is a deletion", ErrNoContent, id)
	}
	if r.Redacted != nil {
		return []Version{vs[slices.Index(recs, r)]}, nil
	}
	data, _, err := s.inner.Get(ctx, key, blob.MaxObjectBytes)
	switch {
	case err == nil && sum256(data) == r.SHA256:
		return nil, fmt.Errorf("%w: version %s of %q has the content the file holds now; change or delete the file first", ErrCurrentVersion, id, key)
	case err != nil && !errors.Is(err, blob.ErrNotExist):
		return nil, err
	}
	red := &Redaction{Actor: s.actorOf(ctx), Time: s.now().UTC()}
	// The store versions the erased content had: on S3 a version is the
	// ETag, the MD5 of the content, so it must not stay in the redacted
	// record (Ver) nor in the records conditioned on it (Prev). Each is
	// replaced by a token named after the first record that produced it,
	// so the order the versions replay in (chain) is kept; the token is
	// the same on a second run, which finishes what a failed one left.
	tokens := map[string]string{}
	for _, o := range recs {
		if o.hasContent() && o.SHA256 == r.SHA256 && o.Ver != "" && !isToken(o.Ver) {
			if _, ok := tokens[o.Ver]; !ok {
				tokens[o.Ver] = redactedToken + o.ID
			}
		}
	}
	erase := func(v string) string {
		if t, ok := tokens[v]; ok {
			return t
		}
		return v
	}
	// The records that only point at an erased version are rewritten
	// first, so that a run that fails midway still finds, on the next
	// run, the records that hold the content and their versions.
	for _, o := range recs {
		if o.hasContent() && o.SHA256 == r.SHA256 || erase(o.Prev) == o.Prev {
			continue
		}
		h := o.header
		h.Prev = erase(h.Prev)
		body, err := encodeRecord(&h, o.content)
		if err != nil {
			return nil, err
		}
		if _, err := s.inner.Put(ctx, o.key, body, blob.Cond{IfVersion: o.version}); err != nil {
			return nil, fmt.Errorf("history: redacting version %s: rewriting version %s: %w", r.ID, o.ID, err)
		}
	}
	var out []Version
	for i, o := range recs {
		if o.Redacted != nil || !o.hasContent() || o.SHA256 != r.SHA256 {
			continue
		}
		h := o.header
		h.Redacted, h.SHA256, h.Size, h.Policy = red, "", 0, "" // the rules and lines were found in the content
		h.Prev, h.Ver = erase(h.Prev), erase(h.Ver)
		body, err := encodeRecord(&h, nil)
		if err != nil {
			return out, err
		}
		if _, err := s.inner.Put(ctx, o.key, body, blob.Cond{IfVersion: o.version}); err != nil {
			return out, fmt.Errorf("history: redacting version %s: %w", o.ID, err)
		}
		v := vs[i]
		v.Redacted, v.SHA256, v.Size, v.Policy = red, "", 0, ""
		out = append(out, v)
	}
	return out, nil
}

// redactedToken starts the token that replaces, in the records, a store
// version of redacted content. No backend's version has this form.
const redactedToken = "redacted:"

func isToken(v string) bool { return strings.HasPrefix(v, redactedToken) }

// Event is one line of the audit trail: a change, or the redaction of an
// earlier version (Op OpRedacted, with the redactor as Actor and the id of
// the version it erased).
type Event struct {
	Time         time.Time `json:"time"`
	Actor        string    `json:"actor"`
	Op           Op        `json:"operation"`
	Path         string    `json:"path"`
	From         string    `json:"from,omitempty"`
	Version      string    `json:"version"`
	Size         int64     `json:"size"`
	SHA256       string    `json:"sha256"`
	RestoredFrom string    `json:"restored_from,omitempty"`
	Policy       string    `json:"policy,omitempty"` // as Version.Policy
}

// AuditFilter selects the events Audit returns. The zero value selects
// every event.
type AuditFilter struct {
	// Since, when not zero, drops the events before it.
	Since time.Time
	// Actor, when not empty, keeps only the events of this actor.
	Actor string
}

// Audit returns every recorded change of the whole store, and every
// redaction, in time order (by the writers' clocks; ties by version id),
// as f selects. Records of every path are included, deleted ones too. It
// reads one List and one Get per record, and writes nothing.
func (s *Store) Audit(ctx context.Context, f AuditFilter) ([]Event, error) {
	l, err := s.newLoader(ctx)
	if err != nil {
		return nil, err
	}
	var out []Event
	keep := func(e Event) {
		if (f.Since.IsZero() || !e.Time.Before(f.Since)) && (f.Actor == "" || e.Actor == f.Actor) {
			out = append(out, e)
		}
	}
	for _, n := range l.names {
		r, err := l.load(ctx, n.key)
		if err != nil {
			return nil, err
		}
		if r == nil {
			continue
		}
		keep(Event{Time: r.Time, Actor: r.Actor, Op: r.Op, Path: r.Path, From: r.From, Version: r.ID,
			Size: r.Size, SHA256: r.SHA256, RestoredFrom: r.RestoredFrom, Policy: r.Policy})
		if r.Redacted != nil {
			keep(Event{Time: r.Redacted.Time, Actor: r.Redacted.Actor, Op: OpRedacted, Path: r.Path, Version: r.ID})
		}
	}
	slices.SortStableFunc(out, func(a, b Event) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.Version, b.Version), strings.Compare(string(a.Op), string(b.Op)))
	})
	return out, nil
}

// PruneResult counts what Prune did.
type PruneResult struct {
	Removed int // records deleted
	Kept    int // records left
}

// Prune applies the retention of Options.Keep and Options.MaxAge to the
// records of every path: a version is removed when it is not among the
// path's last Keep (when Keep is set) and is older than MaxAge (when MaxAge
// is set). The last version of each path, and the one that is its current
// content, are never removed, so a path's present state always has its
// record; nor is a rename record, which links a file to its old path.
// With neither option set it removes nothing.
//
// Prune runs on demand (the CLI's "cloudmem history prune"): writes never
// prune, so a change costs exactly one extra storage write. Its work is one
// List, one Get per record, one Stat per path with records, and one
// Delete(IfVersion) per removed record; a record rewritten meanwhile (a
// redaction) is left for the next run.
func (s *Store) Prune(ctx context.Context) (PruneResult, error) {
	var res PruneResult
	l, err := s.newLoader(ctx)
	if err != nil {
		return res, err
	}
	if s.keep == 0 && s.maxAge == 0 {
		res.Kept = len(l.names)
		return res, nil
	}
	byPath := map[string][]step{}
	for _, n := range l.names {
		r, err := l.load(ctx, n.key)
		if err != nil {
			return res, err
		}
		if r == nil {
			continue
		}
		st := step{r: r, prev: r.Prev, ver: r.Ver}
		if r.Op == OpCreated || r.Op == OpRenamed {
			st.prev = ""
		}
		byPath[r.Path] = append(byPath[r.Path], st)
	}
	now := s.now()
	var errs []error
	for _, path := range slices.Sorted(maps.Keys(byPath)) {
		steps := byPath[path]
		chain(steps)
		cur := ""
		if info, err := s.inner.Stat(ctx, path); err == nil {
			cur = info.Version
		} else if !errors.Is(err, blob.ErrNotExist) {
			errs = append(errs, err)
			res.Kept += len(steps)
			continue
		}
		for i, st := range steps {
			last := i == len(steps)-1
			inKeep := s.keep > 0 && i >= len(steps)-s.keep
			young := s.maxAge > 0 && now.Sub(st.r.Time) <= s.maxAge
			if last || inKeep || young || st.r.Op == OpRenamed || (cur != "" && st.ver == cur) {
				res.Kept++
				continue
			}
			err := s.inner.Delete(ctx, st.r.key, blob.Cond{IfVersion: st.r.version})
			switch {
			case err == nil, errors.Is(err, blob.ErrNotExist):
				res.Removed++
			case errors.Is(err, blob.ErrPrecondition):
				res.Kept++
			default:
				res.Kept++
				errs = append(errs, fmt.Errorf("history: pruning version %s: %w", st.r.ID, err))
			}
		}
	}
	return res, errors.Join(errs...)
}
