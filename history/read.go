package history

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// Version is one version of a path, as History and Show report it.
type Version struct {
	// ID names the version in PATH@VERSION; "" for OpUnrecorded.
	ID string `json:"version"`
	// Time is when the change was recorded, by the writer's clock.
	Time time.Time `json:"time"`
	// Actor is who made the change ("" when unknown).
	Actor string `json:"actor"`
	// Op is what the change did.
	Op Op `json:"operation"`
	// Path is the store key the version belongs to; for a rename, the
	// new key.
	Path string `json:"path"`
	// From is the old key of a rename, "" otherwise.
	From string `json:"from,omitempty"`
	// Size is the content's length in bytes (0 for a deletion).
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of the content; "" for a deletion and
	// for a redacted version.
	SHA256 string `json:"sha256"`
	// RestoredFrom is the version a Restore wrote back, "" otherwise.
	RestoredFrom string `json:"restored_from,omitempty"`
	// Policy says what a write policy did to the content, in rules and
	// line numbers, never the content ("secrets redacted: generic-api-key
	// on line 3"); "" when it did nothing, and for a redacted version.
	Policy string `json:"policy,omitempty"`
	// Redacted, when set, says who erased the content and when.
	Redacted *Redaction `json:"redacted,omitempty"`
	// Current is true for the version that is the path's present state
	// (its content, or its absence).
	Current bool `json:"current"`
	// StoreVersion is the store version (blob.Info.Version) the change
	// left the file at, when the record says; "" for a deletion and for a
	// record that does not. A reader that lists a file at another version
	// read the record of an older change: the newer one's record is
	// written just after its write.
	StoreVersion string `json:"-"`
}

// Redaction says who erased a version's content, and when.
type Redaction struct {
	Actor string    `json:"actor"`
	Time  time.Time `json:"time"`
}

func (r *record) toVersion() Version {
	return Version{ID: r.ID, Time: r.Time, Actor: r.Actor, Op: r.Op, Path: r.Path, From: r.From,
		Size: r.Size, SHA256: r.SHA256, RestoredFrom: r.RestoredFrom, Policy: r.Policy, Redacted: r.Redacted,
		StoreVersion: r.Ver}
}

// loader reads records once each, for one query.
type loader struct {
	s     *Store
	names []recordName
	cache map[string]*record
}

func (s *Store) newLoader(ctx context.Context) (*loader, error) {
	names, err := s.recordNames(ctx)
	if err != nil {
		return nil, err
	}
	return &loader{s: s, names: names, cache: map[string]*record{}}, nil
}

func (l *loader) load(ctx context.Context, key string) (*record, error) {
	if r, ok := l.cache[key]; ok {
		return r, nil
	}
	r, err := l.s.loadRecord(ctx, key)
	if errors.Is(err, blob.ErrNotExist) {
		return nil, nil // pruned since the listing
	}
	if err != nil {
		return nil, fmt.Errorf("history: reading a version record: %w", err)
	}
	l.cache[key] = r
	return r, nil
}

// step is a record as seen from one path: the state it found (prev) and
// the state it left (ver), "" meaning absent.
type step struct {
	r         *record
	prev, ver string
}

// chain orders the steps of one path: by time, then moving each step after
// the step that produced the version it was conditioned on, so that writers
// whose records landed out of order still replay in the order their
// changes did.
func chain(steps []step) {
	slices.SortStableFunc(steps, func(a, b step) int {
		return cmp.Or(a.r.Time.Compare(b.r.Time), strings.Compare(a.r.ID, b.r.ID))
	})
	// Each pass moves at most one step; a step moves only forward, behind
	// its producer, so the passes are bounded by the number of steps
	// squared, and in practice by the few records that landed out of order.
	for range len(steps) * len(steps) {
		at := make(map[string]int, len(steps)) // version -> index of the step that produced it
		for i, st := range steps {
			if st.ver != "" {
				at[st.ver] = i
			}
		}
		moved := false
		for i, st := range steps {
			if j, ok := at[st.prev]; ok && st.prev != "" && j > i {
				copy(steps[i:j], steps[i+1:j+1])
				steps[j] = st
				moved = true
				break
			}
		}
		if !moved {
			return
		}
	}
}

// lineage returns the records of path in order, with the history of every
// path a rename moved into it spliced in before the rename. When bounded,
// it stops at the step that left version until (or, when no step did, at
// the time limit): the history of a source up to its move.
func (l *loader) lineage(ctx context.Context, path string, bounded bool, until string, limit time.Time, seen map[string]bool) ([]*record, error) {
	dir := pathHash(path)
	var steps []step
	for _, n := range l.names {
		if n.dir != dir && n.fromHash != dir {
			continue
		}
		r, err := l.load(ctx, n.key)
		if err != nil {
			return nil, err
		}
		if r == nil || seen[r.ID] {
			continue
		}
		switch {
		case n.dir == dir && r.Path == path:
			st := step{r: r, prev: r.Prev, ver: r.Ver}
			if r.Op == OpCreated || r.Op == OpRenamed {
				st.prev = ""
			}
			steps = append(steps, st)
		case n.fromHash == dir && r.From == path && r.Op == OpRenamed:
			steps = append(steps, step{r: r, prev: r.Prev})
		}
	}
	chain(steps)
	if bounded {
		if i := slices.IndexFunc(steps, func(st step) bool { return until != "" && st.ver == until }); i >= 0 {
			steps = steps[:i+1]
		} else {
			steps = slices.DeleteFunc(steps, func(st step) bool { return st.r.Time.After(limit) })
		}
	}
	for _, st := range steps {
		seen[st.r.ID] = true
	}
	var out []*record
	for _, st := range steps {
		if st.r.Op == OpRenamed && st.r.Path == path {
			before, err := l.lineage(ctx, st.r.From, true, st.r.Prev, st.r.Time, seen)
			if err != nil {
				return nil, err
			}
			out = append(out, before...)
		}
		out = append(out, st.r)
	}
	return out, nil
}

// History returns every version of the file at key, oldest first: its own
// changes and, across renames, those of the paths it was moved from (the
// Path of each version says where the file was then). A file moved away or
// deleted keeps its history, ending with that change. The version that is
// the key's present state has Current set; when the present state has no
// record (a file that existed before history was turned on, or was changed
// around the Store), a last entry with Op OpUnrecorded describes it.
//
// It reads one List of the record names, one Get per record of the file's
// lineage and one Stat of key; it writes nothing. A key with no record
// that does not exist gives an error wrapping blob.ErrNotExist.
func (s *Store) History(ctx context.Context, key string) ([]Version, error) {
	vs, _, err := s.history(ctx, key)
	return vs, err
}

func (s *Store) history(ctx context.Context, key string) ([]Version, []*record, error) {
	if err := check(key); err != nil {
		return nil, nil, err
	}
	l, err := s.newLoader(ctx)
	if err != nil {
		return nil, nil, err
	}
	recs, err := l.lineage(ctx, key, false, "", time.Time{}, map[string]bool{})
	if err != nil {
		return nil, nil, err
	}
	info, err := s.inner.Stat(ctx, key)
	exists := err == nil
	if err != nil && !errors.Is(err, blob.ErrNotExist) {
		return nil, nil, err
	}
	vs := make([]Version, len(recs))
	current := -1
	for i, r := range recs {
		vs[i] = r.toVersion()
		if exists && r.Path == key && r.Op != OpDeleted && r.Ver == info.Version {
			current = i
		}
	}
	if !exists && len(recs) > 0 {
		if last := recs[len(recs)-1]; last.Op == OpDeleted && last.Path == key || last.Op == OpRenamed && last.From == key {
			current = len(recs) - 1
		}
	}
	switch {
	case current >= 0:
		vs[current].Current = true
	case exists:
		vs = append(vs, Version{Op: OpUnrecorded, Path: key, Size: info.Size, Time: info.Modified, Current: true})
	case len(recs) > 0:
		vs = append(vs, Version{Op: OpUnrecorded, Path: key, Current: true})
	default:
		return nil, nil, fmt.Errorf("history: %q has no versions: %w", key, blob.ErrNotExist)
	}
	return vs, recs, nil
}

// find returns the record of version id in key's history.
func (s *Store) find(ctx context.Context, key, id string) (*record, []Version, []*record, error) {
	if !validID(id) {
		return nil, nil, nil, fmt.Errorf("%w %q: a version is %d hexadecimal digits", ErrUnknownVersion, id, idLen)
	}
	vs, recs, err := s.history(ctx, key)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, r := range recs {
		if r.ID == id {
			return r, vs, recs, nil
		}
	}
	return nil, nil, nil, fmt.Errorf("%w %q in the history of %q", ErrUnknownVersion, id, key)
}

// Show returns the content of version id of the file at key (an id from
// History(key), which includes the versions it had under earlier paths).
// A deletion or a redacted version gives an error wrapping ErrNoContent,
// an id not in the history one wrapping ErrUnknownVersion.
func (s *Store) Show(ctx context.Context, key, id string) ([]byte, Version, error) {
	r, vs, recs, err := s.find(ctx, key, id)
	if err != nil {
		return nil, Version{}, err
	}
	v := vs[slices.Index(recs, r)]
	if !r.hasContent() {
		return nil, v, fmt.Errorf("%w: version %s is %s", ErrNoContent, id, describe(r))
	}
	return r.content, v, nil
}

func describe(r *record) string {
	if r.Redacted != nil {
		return "redacted"
	}
	return "a deletion"
}

// Diff returns the unified diff from version from of the file at key to
// version to, or to its current content when to is "" (an absent file
// counts as empty). The labels are KEY@VERSION, and KEY for the current
// content. It has the errors of Show.
func (s *Store) Diff(ctx context.Context, key, from, to string) (string, error) {
	a, va, err := s.Show(ctx, key, from)
	if err != nil {
		return "", err
	}
	var b []byte
	bName := key
	if to == "" {
		b, _, err = s.inner.Get(ctx, key, blob.MaxObjectBytes)
		if err != nil && !errors.Is(err, blob.ErrNotExist) {
			return "", err
		}
	} else {
		var vb Version
		if b, vb, err = s.Show(ctx, key, to); err != nil {
			return "", err
		}
		bName = vb.Path + "@" + to
	}
	return UnifiedDiff(va.Path+"@"+from, bName, a, b), nil
}

// ParseRef splits a PATH@VERSION reference at its last '@'. It returns an
// error wrapping ErrBadRef when there is no '@', the path is empty, or
// the version is not a version id.
func ParseRef(ref string) (path, id string, err error) {
	i := strings.LastIndexByte(ref, '@')
	if i < 0 {
		return "", "", fmt.Errorf("%w: %q has no @VERSION", ErrBadRef, ref)
	}
	path, id = ref[:i], ref[i+1:]
	switch {
	case path == "":
		return "", "", fmt.Errorf("%w: %q has no path before the @", ErrBadRef, ref)
	case !validID(id):
		return "", "", fmt.Errorf("%w: %q: a version is %d hexadecimal digits, as history lists them", ErrBadRef, ref, idLen)
	}
	return path, id, nil
}
