package blob

import (
	"context"
	"strings"
	"sync"
)

// actorKey is the context key under which WithActor stores the actor.
type actorKey struct{}

// WithActor returns a copy of ctx that names who is making the storage calls
// made with it: an agent, a session, a user@host. Layers that record changes
// (the history wrapper, telemetry) read it with Actor. An empty actor means
// "not set".
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// Actor returns the actor set on ctx with WithActor, or "" when none was.
func Actor(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}

// policyKey is the context key under which WithPolicyAction stores the
// action.
type policyKey struct{}

// WithPolicyAction returns a copy of ctx that says what a write policy did
// to the content the Puts made with it write ("secrets redacted:
// generic-api-key on line 3"), for the layers that record changes (the
// history wrapper keeps it with the version). The text names rules and
// lines, never content. An empty action means "none".
func WithPolicyAction(ctx context.Context, action string) context.Context {
	return context.WithValue(ctx, policyKey{}, action)
}

// PolicyAction returns the action set on ctx with WithPolicyAction, or "".
func PolicyAction(ctx context.Context) string {
	a, _ := ctx.Value(policyKey{}).(string)
	return a
}

// moveKey is the context key under which WithMove stores the move.
type moveKey struct{}

// A Move is a rename in progress that is made key by key (blob.Rename's
// fallback, the memory handler's move): every storage call of the move
// carries it in its context (WithMove), so that a layer that records
// changes (the history wrapper) can record each moved file as one move once
// its source is gone, instead of a creation and a deletion. The calls of a
// move are: Puts of keys under Dst (the copies, and the newer content of a
// source rewritten meanwhile), Deletes of keys under Src (the sources, each
// once it has its copy) and Deletes of keys under Dst (a failed move taking
// its copies back). A Move is safe for concurrent use.
type Move struct {
	Src, Dst string // the key or directory moved, and its new name

	mu    sync.Mutex
	notes map[any]any
}

// WithMove returns a copy of ctx for the calls of a move of src (a key, or a
// directory and every key under it) to dst, carrying a new Move.
func WithMove(ctx context.Context, src, dst string) context.Context {
	return context.WithValue(ctx, moveKey{}, &Move{Src: src, Dst: dst})
}

// MoveOf returns the Move ctx carries, or nil.
func MoveOf(ctx context.Context) *Move {
	m, _ := ctx.Value(moveKey{}).(*Move)
	return m
}

// Dest returns the new key of key, a key of the move's source, and whether
// key is one.
func (m *Move) Dest(key string) (string, bool) { return rebase(key, m.Src, m.Dst) }

// Source returns the old key of key, a key of the move's destination, and
// whether key is one.
func (m *Move) Source(key string) (string, bool) { return rebase(key, m.Dst, m.Src) }

func rebase(key, from, to string) (string, bool) {
	switch {
	case key == from:
		return to, true
	case strings.HasPrefix(key, from+"/"):
		return to + key[len(from):], true
	}
	return "", false
}

// Note keeps v under k until the move ends or Take takes it: the place
// where a layer passes what it learnt in one call of the move to another
// (k should be of a type of the layer's own, as for context keys).
func (m *Move) Note(k, v any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.notes == nil {
		m.notes = map[any]any{}
	}
	m.notes[k] = v
}

// Take returns what Note kept under k, and forgets it.
func (m *Move) Take(k any) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.notes[k]
	delete(m.notes, k)
	return v, ok
}

// lazySyncKey is the context key of WithLazySync.
type lazySyncKey struct{}

// WithLazySync returns a copy of ctx that lets a store skip, for the writes
// made with it, what makes a write survive a crash of the machine (a file
// system's fsyncs): for bookkeeping that is rebuilt when it is lost or
// found unreadable, such as the memory handler's file count. Such a write
// is still atomic, conditional and seen at once by every reader, and it
// outlives the process that made it; only a crash of the machine (a power
// loss, a kernel panic) may undo it, or leave its object unreadable. A
// store whose writes cost nothing more to make durable ignores it.
func WithLazySync(ctx context.Context) context.Context {
	return context.WithValue(ctx, lazySyncKey{}, true)
}

// LazySync reports whether ctx was made by WithLazySync.
func LazySync(ctx context.Context) bool {
	lazy, _ := ctx.Value(lazySyncKey{}).(bool)
	return lazy
}
