package web

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// Mount is one store of a console over a mount table (Options.Mounts): it
// shows at /memories/Name, as package mount places it.
type Mount struct {
	// Name places the store at /memories/Name (mount.CheckName).
	Name string
	// History is the store with its history: the console reads and
	// writes the mount through it, so that every change is recorded, and
	// shows its versions and audit trail.
	History *history.Store
	// Store is the store of a mount that keeps no history, used when
	// History is nil: its files show, but they have no history page, no
	// action, and no event in the audit log (the pages say so). Beside
	// History, it is the store the console reads and writes through
	// instead, as Options.Store.
	Store blob.Store
	// ReadOnly shows the mount without actions, and refuses its writes.
	ReadOnly bool
}

// errNoHistoryKept means the file lies in a mount that keeps no history.
var errNoHistoryKept = errors.New("web: the mount keeps no history")

// part is one store whose history the console reads: the whole store
// (Options.History, name ""), or one mount of the table.
type part struct {
	name     string         // the mount's name; "" for Options.History
	hist     *history.Store // nil: the mount keeps no history
	readOnly bool
}

// topKey is the key of the console's store (the mount table) of key, a
// key of the part's store.
func (p *part) topKey(key string) string {
	if p.name == "" {
		return key
	}
	return p.name + "/" + key
}

// openParts returns the store the console shows and its parts: the
// history store of opts, or the mount table of opts.Mounts.
func openParts(opts Options) (blob.Store, []*part, error) {
	switch {
	case opts.History != nil && len(opts.Mounts) > 0:
		return nil, nil, errors.New("web: Options takes History or Mounts, not both")
	case opts.History != nil:
		var s blob.Store = opts.History
		if opts.Store != nil {
			s = opts.Store
		}
		return s, []*part{{hist: opts.History, readOnly: blob.IsReadOnly(s)}}, nil
	case opts.Store != nil:
		return nil, nil, errors.New("web: Options.Store goes with Options.History")
	case len(opts.Mounts) == 0:
		return nil, nil, errors.New("web: Options.History or Options.Mounts is required")
	}
	table := make([]mount.Mount, len(opts.Mounts))
	parts := make([]*part, len(opts.Mounts))
	for i, m := range opts.Mounts {
		s := m.Store
		if s == nil && m.History != nil {
			s = m.History
		}
		if s == nil {
			return nil, nil, fmt.Errorf("web: mount %q has neither History nor Store", m.Name)
		}
		table[i] = mount.Mount{Name: m.Name, Store: s, ReadOnly: m.ReadOnly}
		parts[i] = &part{name: m.Name, hist: m.History, readOnly: m.ReadOnly || blob.IsReadOnly(s)}
	}
	top, err := mount.New(table)
	if err != nil {
		return nil, nil, fmt.Errorf("web: %w", err)
	}
	return top, parts, nil
}

// locate returns the part holding skey, a key of the console's store, and
// the key inside it; ok is false for a key in no mount.
func (s *Server) locate(skey string) (p *part, key string, ok bool) {
	if len(s.parts) == 1 && s.parts[0].name == "" {
		return s.parts[0], skey, true
	}
	name, rest, _ := strings.Cut(skey, "/")
	for _, p := range s.parts {
		if p.name == name && rest != "" {
			return p, rest, true
		}
	}
	return nil, "", false
}

// maxActors bounds the entries of an actorCache.
const maxActors = 10_000

// actorCache remembers who made the last recorded change of each file,
// with the store version the file had when it was looked up: while the
// file keeps that version, its last change is the same, and the tree page
// asks the history nothing. It is safe for concurrent use.
type actorCache struct {
	mu sync.Mutex
	m  map[string]cachedActor // by the console's store key
}

type cachedActor struct {
	version string // the file's store version when looked up
	actor   string
}

// lastActors returns, by key of the session's tree, who made the last
// recorded change of each of the files (keys of the session's tree, with
// their store versions): from the cache while a file keeps its version,
// else one history.LastChange (a List of the file's records and a Get),
// which is cached when its record is the listed version's.
// A file whose lookup fails shows no actor; the log says why.
func (s *Server) lastActors(ctx context.Context, se *session, files []memory.FileInfo) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		skey, _, ok := storeKey(se.scope.tenant, f.Key)
		if !ok {
			continue
		}
		s.actors.mu.Lock()
		c, hit := s.actors.m[skey]
		s.actors.mu.Unlock()
		if hit && c.version == f.Version && f.Version != "" {
			out[f.Key] = c.actor
			continue
		}
		p, key, ok := s.locate(skey)
		if !ok || p.hist == nil {
			continue
		}
		v, found, err := p.hist.LastChange(ctx, key)
		if err != nil {
			s.opts.Logger.Warn("web: reading the last change of a file for the tree", "err", err)
			continue
		}
		if found {
			out[f.Key] = v.Actor
		}
		if found && v.StoreVersion != "" && v.StoreVersion != f.Version {
			// The record of an older change: the file's own is written
			// just after its write. The next view looks again.
			continue
		}
		s.actors.mu.Lock()
		if len(s.actors.m) >= maxActors {
			clear(s.actors.m) // rebuilt by the next views, two calls a file
		}
		s.actors.m[skey] = cachedActor{version: f.Version, actor: out[f.Key]}
		s.actors.mu.Unlock()
	}
	return out
}
