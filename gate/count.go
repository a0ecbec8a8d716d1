package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// The file count.
//
// With the file limit on, create must know how many files its scope holds
// (the store, or the path's mount: countPrefix). Listing the scope on every
// create costs what the store holds; instead each scope keeps its count in
// a reserved bookkeeping object, fileCountKey under the scope, which no
// memory path reaches and no listing, size or limit counts. Every write of
// it is conditional on the version read (Put IfVersion, or IfAbsent), so
// racing writers of the count take turns, and none overwrites another's.
//
// # The invariant: never too low, but for a crash in one window
//
// Whatever races or fails, the count is not below the number of files the
// Trees wrote in its scope, but for one file per create that died
// between its two writes on the fast path below, or whose storage failed
// as it withdrew its file, and for the fast path's writes of the count
// that a crash of the machine undid: those skip the store's syncs
// (blob.WithLazySync), so on the file store a power loss can leave the
// count too low by the creates made far from the limit in the seconds the
// file system had not yet written back. Every other write of the count
// (reservations near the limit, recounts) is synced, and with it all that
// came before. Every writer of memory files goes through a
// Tree (memory.Handler's commands, and its Write and Remove, which the
// CLI, transfer, dirsync and history restore call), so none writes past
// the count; a key written into the store by other means is counted at
// the next recount. A count too high is safe: before a
// create is refused as full, the scope is listed and the count rewritten
// (a recount), unless nothing changed the count since its last recount. A
// count too low lets the store grow past the limit by as much. So:
//
//   - far from the limit (more than countMargin places left, as the count
//     last read or written by this Tree says: countCache), a create
//     writes its file (Put IfAbsent) and one more in the count (Put
//     IfVersion) at once (createNew); a count another writer changed
//     meanwhile is read again, and one found near the limit makes the
//     create withdraw its file and take the way below. A create whose
//     file did not stay (the name was taken, or settle withdrew it) takes
//     its file off the count again. A crash after the file landed and
//     before the count did leaves the count one too low.
//   - near the limit, create reserves before it writes: it reads the
//     count, refuses when it is at the limit, and otherwise writes
//     count+1, with the reservation (the key, a random id, the time) added
//     to the count's pending list; only then does it write the file, and
//     then it takes its entry off the list (confirm). A crash after the
//     reservation leaves the count one too high. Racing creates are
//     serialised by the conditional writes: no more than MaxFiles-count of
//     them can reserve.
//   - a reservation is given back (count-1, entry removed) only when the
//     create's conditional Put proves that another writer holds the name,
//     and only while the entry is still pending; a create that fails
//     otherwise, or that settle withdraws, keeps its reservation (too
//     high).
//   - a delete does not write the count: it reads it while it deletes
//     (or, once per version, trusts the one it remembers far from the
//     limit: "A delete far from the limit" below), and a file delete
//     leaves the file to this Tree's next create counted the fast way,
//     which takes it off in its own write of the count (a credit:
//     countCache), as long as the count's token is the one the delete
//     read or trusted (a recount since may have left the file out
//     already). Until then, and for good when the Tree ends first or
//     the delete was a directory's, the count is too high by the files
//     deleted, and the next create refused as full recounts. A count that
//     a recount left unchanged (Counted) is marked changed once the delete
//     is done, so that the next create refused as full recounts; a crash
//     between the delete and the mark leaves a full count marked as
//     counted, and creates refused until another delete marks it. On a
//     store whose racing deletes of one file may all succeed
//     (blob.Traits.DeletesMayRepeat: S3), no delete leaves a credit: a
//     second success deleted no file, and its credit would leave the
//     count too low.
//   - a move into another mount reserves its files in that mount's count
//     before it copies them, as a create near the limit does, one pending
//     entry per file under one id (reserveMove), and is refused as full
//     when they do not fit; the old mount's count stays too high.
//   - a move by copy (move.go) whose source, once copied, was deleted by
//     another writer before the move deleted it keeps the copy, which
//     that delete took off the count: the move adds it back (sourceGone).
//
// # A delete far from the limit
//
// A file delete by a Tree that remembers the count (countCache) more
// than countMargin places from the limit, and none of whose deletes
// deleted a file without reading that same count (countCache.trust; a
// delete that found no file gives the trust back: untrust), does not
// read it:
// the remembered token serves the credit as well as a fresh one would (a
// recount since changed the token, and the credit is then dropped), and
// the one thing a fresh read could add is a Counted mark to clear, which
// only a recount sets, which only a create refused at the limit makes. So
// this gives up one case: another Tree filled the scope since this
// Tree's last operation there and recounted it at the limit. The delete
// then leaves the count marked Counted and one too high (one per Tree
// that so deleted), and creates are refused as full with as many places
// free until the next delete, which reads the count (every Tree that
// was refused remembers it at the limit) and marks it; the create after
// that recounts. Never more files than the limit.
//
// # Why reservations are listed
//
// A recount lists the scope and writes what it found, conditional on the
// version it read before listing. The listing cannot show the file of a
// create that reserved before it but writes after it: a recount that wrote
// only the listed number would forget such a reservation, and racing
// creates at the limit could then exceed it (at MaxFiles-1, one create
// reserves the last place, a second finds the count at the limit and
// recounts before the first file landed, and both succeed). So a recount
// adds to what it lists every pending reservation whose key the listing
// lacks; one whose key it shows has landed and leaves the list. A pending
// entry older than pendingTTL is dropped: its create gave up (a create
// never writes its file more than pendingTTL/2 after it reserved) or
// crashed; the count it added stays, too high, until the next recount. So
// is one dated more than pendingTTL ahead, which no Tree whose clock
// agrees wrote (see fresh).
// This assumes the clocks of the Trees that share a store agree within
// pendingTTL/2.
//
// The fast path puts nothing on the list: a recount runs only at the
// limit, and a create counted at once found at least countMargin places
// left, so a recount can miss its file only when countMargin other creates
// landed and one was refused while that one file was still being written.
//
// # Expiry
//
// On a store whose files expire (blob.Traits.Expires: a write policy's
// expiry rules), files leave the store with no write, so the count is too
// high by the files expired: a create the count would refuse as full
// always recounts first (a Counted mark does not spare it), and a recount
// lists through the expiring store, which leaves expired files out. An
// expired file that a create deletes to write in its place is counted
// anew: the count is then one too high, which the next recount corrects.
//
// # Costs
//
// Steady state, far from the limit, a create adds to its file's Put one
// Put of the count, sent with it (a Tree's first create at a scope reads
// the count first), and a file delete nothing (one Get of the count, sent
// with its Delete, when the Tree does not remember the count far from
// the limit, or another of its deletes already deleted a file trusting
// that version: a file delete right after another). Near the limit a create adds 1 Get and 2 Puts of the count to its
// checks (3 Gets and 4 Puts under contention, and so on). Nothing grows
// with the store. A create that finds no count object, or one at the
// limit and changed since its last recount, pays one List of its scope
// instead of the Put of its reservation.

// fileCountKey is the key, relative to the root of a store (or of each
// mount of a mount table), of the object that holds the store's file count
// for the file limit (Options.MaxFiles). It is reserved (blob.IsReserved):
// no memory path reaches it and no listing or limit counts it.
const fileCountKey = blob.ReservedName + "/files"

// countAttempts bounds how often one operation re-reads and rewrites the
// count when other writers keep changing it in between.
const countAttempts = 32

// pendingTTL is how long a reservation stays on the pending list: a create
// gives up when more than half of it passed between its reservation and
// its write.
const pendingTTL = 10 * time.Minute

// countReadLimit bounds a read of the count object; a larger one is
// unreadable, and the next create recounts.
const countReadLimit = 1 << 20

// errCountBusy is the failure of a count that kept changing under an operation.
var errCountBusy = errors.New("gate: the file count kept changing under this operation")

// errSlowCreate is the failure of a create whose reservation became too
// old to write its file under.
var errSlowCreate = errors.New("gate: the create took too long after it reserved its place in the file count")

// fileCount is the content of the count object.
type fileCount struct {
	// Files is the number of memory files in the scope, pending
	// reservations included, or -1 when not known (an object that
	// decodeCount does not take).
	Files int `json:"files"`
	// Token changes with every recount, and only then.
	Token string `json:"token"`
	// Counted is true when nothing changed Files since a recount set it.
	Counted bool `json:"counted"`
	// Pending lists the reservations whose files may not have landed.
	Pending []pending `json:"pending,omitempty"`
}

// pending is one reservation on the pending list. Its fields have fixed
// sizes (an id of 16 hex digits, the time in Unix nanoseconds), so that the
// count object's size depends only on the keys pending.
type pending struct {
	Key string `json:"key"`
	ID  string `json:"id"`
	At  int64  `json:"at"` // when it was made, in Unix nanoseconds
}

// countRef is the count object as read or written: its state and version.
type countRef struct {
	key     string
	exists  bool
	version string
	state   fileCount
}

// reservation is what a create reserved: one file in the count at key,
// pending under id since the monotonic time at.
type reservation struct {
	key string
	id  string
	at  time.Time
	ref countRef // the count as the reservation left it
}

// newID returns a random id of 16 hex digits.
func newID() string { return fmt.Sprintf("%016x", rand.Uint64()) }

// countKey is the key of the count object of key's scope.
func (g *Tree) countKey(key string) string { return g.countPrefix(key) + fileCountKey }

// readCount reads the count object at ckey. A missing object is no error
// (exists is false); an unreadable one reads as an unknown count.
func (g *Tree) readCount(ctx context.Context, ckey string) (countRef, error) {
	ref := countRef{key: ckey}
	data, info, err := g.store.Get(ctx, ckey, countReadLimit)
	switch {
	case errors.Is(err, blob.ErrNotExist):
		g.counts.forget(ckey)
		return ref, nil
	case errors.Is(err, blob.ErrTooLarge):
		if info, err = g.store.Stat(ctx, ckey); errors.Is(err, blob.ErrNotExist) {
			g.counts.forget(ckey)
			return ref, nil
		}
		if err != nil {
			return ref, err
		}
		data = nil
	case err != nil:
		return ref, err
	}
	ref.exists, ref.version = true, info.Version
	ref.state = decodeCount(data)
	g.counts.remember(ref)
	return ref, nil
}

// decodeCount returns the count that data holds, or an unknown count
// (Files -1, which the next create recounts) when data is not one a Tree
// writes: not JSON of a fileCount, a field of files, token and counted
// missing or null, files below 0, or an empty token. Another writer of the
// bucket may plant anything there; `{}` must not read as 0 files.
func decodeCount(data []byte) fileCount {
	var wire struct {
		Files   *int      `json:"files"`
		Token   *string   `json:"token"`
		Counted *bool     `json:"counted"`
		Pending []pending `json:"pending"`
	}
	if json.Unmarshal(data, &wire) != nil || wire.Files == nil || wire.Token == nil || wire.Counted == nil ||
		*wire.Files < 0 || *wire.Token == "" {
		return fileCount{Files: -1}
	}
	return fileCount{Files: *wire.Files, Token: *wire.Token, Counted: *wire.Counted, Pending: wire.Pending}
}

// writeCount writes next over ref, conditional on ref's version (or on
// absence). It returns the new ref, or an error wrapping
// blob.ErrPrecondition when another writer changed the object meanwhile.
func (g *Tree) writeCount(ctx context.Context, ref countRef, next fileCount) (countRef, error) {
	data, err := json.Marshal(next)
	if err != nil {
		return ref, err
	}
	cond := blob.Cond{IfAbsent: true}
	if ref.exists {
		cond = blob.Cond{IfVersion: ref.version}
	}
	info, err := g.store.Put(ctx, ref.key, data, cond)
	if err != nil {
		return ref, err
	}
	written := countRef{key: ref.key, exists: true, version: info.Version, state: next}
	g.counts.remember(written)
	return written, nil
}

// countCache remembers the count objects a Tree last read or wrote, so
// that its next operation at the same scope writes the count conditionally on
// the version it knows instead of reading it first. A remembered count is
// only ever a guess: every write made on it is conditional on its version,
// and one that another writer changed since fails and is read afresh. It is
// safe for concurrent use.
type countCache struct {
	mu      sync.Mutex
	refs    map[string]countRef // by key of the count object
	credits map[string]credit   // by key of the count object
	// trusted is, by key of the count object, the version a file delete
	// trusted without reading it (trust): the next delete reads it.
	trusted map[string]string
}

// credit is the number of files this Tree deleted from a count's scope
// without lowering the count, while the count had the token token: the
// next create that counts the fast way takes them off with its own write,
// when the count still has that token (no recount since, which would have
// left them out already).
type credit struct {
	token string
	n     int
}

// addCredit notes one file deleted from the scope of ckey, whose count had
// token; credits for another token are dropped (the count is then too
// high, which is safe).
func (c *countCache) addCredit(ckey, token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.credits == nil {
		c.credits = make(map[string]credit)
	}
	cr := c.credits[ckey]
	if cr.token != token {
		cr = credit{token: token}
	}
	cr.n++
	c.credits[ckey] = cr
}

// takeCredit removes and returns the credit of ckey.
func (c *countCache) takeCredit(ckey string) credit {
	c.mu.Lock()
	defer c.mu.Unlock()
	cr := c.credits[ckey]
	delete(c.credits, ckey)
	return cr
}

// giveBack returns the credit cr, taken from ckey and not used, unless a
// credit for another token was noted meanwhile.
func (c *countCache) giveBack(ckey string, cr credit) {
	if cr.n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.credits == nil {
		c.credits = make(map[string]credit)
	}
	if now, ok := c.credits[ckey]; ok && now.token != cr.token {
		return
	}
	now := c.credits[ckey]
	c.credits[ckey] = credit{token: cr.token, n: now.n + cr.n}
}

// remember keeps ref, unless it is a missing object.
func (c *countCache) remember(ref countRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ref.exists {
		delete(c.refs, ref.key)
		return
	}
	if c.refs == nil {
		c.refs = make(map[string]countRef)
	}
	c.refs[ref.key] = ref
}

// forget drops what is remembered of the count object ckey, its credit
// too.
func (c *countCache) forget(ckey string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.refs, ckey)
	delete(c.credits, ckey)
	delete(c.trusted, ckey)
}

// trust reports whether a file delete may trust the remembered count ref
// without reading it, and if so notes that one did: once per version
// remembered, so that a Tree's deletes leave a count another Tree
// recounted since at most one too high ("A delete far from the limit").
func (c *countCache) trust(ref countRef) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refs[ref.key].version != ref.version || c.trusted[ref.key] == ref.version {
		return false
	}
	if c.trusted == nil {
		c.trusted = make(map[string]string)
	}
	c.trusted[ref.key] = ref.version
	return true
}

// untrust gives back the trust of a file delete that deleted no file (the
// path was a directory or nothing): it left no file counted too many, so
// the next file delete may trust the same version.
func (c *countCache) untrust(ref countRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trusted[ref.key] == ref.version {
		delete(c.trusted, ref.key)
	}
}

// known returns the count object ckey as last read or written by this
// Tree, or reads it when there is none (then read is true).
func (g *Tree) known(ctx context.Context, ckey string) (ref countRef, read bool, err error) {
	if ref, ok := g.counts.lookup(ckey); ok {
		return ref, false, nil
	}
	ref, err = g.readCount(ctx, ckey)
	return ref, true, err
}

// lookup returns the count object ckey as last read or written, if it is
// remembered.
func (c *countCache) lookup(ckey string) (countRef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ref, ok := c.refs[ckey]
	return ref, ok
}

// fresh returns p without the entries older than pendingTTL, or dated
// more than pendingTTL ahead of now, and whether it dropped any. An entry
// from the future was written by a Tree whose clock runs far ahead, or
// by someone other than a Tree (the store is another party's to write):
// kept, it would hold its place in the count for as long, and one dated a
// century ahead would keep a store full for ever, with no file to delete.
func fresh(p []pending, now time.Time) ([]pending, bool) {
	kept := slices.DeleteFunc(slices.Clone(p), func(e pending) bool {
		age := now.Sub(time.Unix(0, e.At))
		return age > pendingTTL || age < -pendingTTL
	})
	return kept, len(kept) < len(p)
}

// reserve adds the files keys (a create's one, or the new keys of the files
// a move brings into another mount), all in one scope, to its count, unless
// the scope would then hold more than maxFiles files; then it returns full
// >= 0, the number of files it holds, for the "full" text, and reserves
// nothing. Each key is an entry of the pending list, all under one id. When
// read is not nil, it is the count as this operation just read it, which the
// first attempt uses.
func (g *Tree) reserve(ctx context.Context, keys []string, maxFiles int, read *countRef) (r reservation, full int, err error) {
	key, n := keys[0], len(keys)
	prefix := g.countPrefix(key)
	ckey := prefix + fileCountKey
	// This Tree's deletes not yet taken off the count (a credit) are
	// taken off by the reservation's write; a recount leaves them out.
	cr := g.counts.takeCredit(ckey)
	used := 0 // of cr, by the last attempt; -1: a recount made cr void
	defer func() {
		switch {
		case err == nil && used >= 0, errors.Is(err, errCountBusy), errors.Is(err, context.Canceled),
			errors.Is(err, context.DeadlineExceeded):
			cr.n -= max(used, 0) // every write but the one that used it failed
			g.counts.giveBack(ckey, cr)
		}
		// After a recount, or a failure that may have written the count
		// with cr taken off, cr is dropped (the count is then too high).
	}()
	for attempt := range countAttempts {
		used = 0
		if attempt > 0 {
			if err := countWait(ctx, attempt-1); err != nil {
				return r, -1, err
			}
		}
		var ref countRef
		if attempt == 0 && read != nil && read.key == ckey {
			ref = *read
		} else if ref, err = g.readCount(ctx, ckey); err != nil {
			return r, -1, err
		}
		now := time.Now()
		id := newID()
		entries := make([]pending, n)
		for i, k := range keys {
			entries[i] = pending{Key: k, ID: id, At: now.UnixNano()}
		}
		st := ref.state
		if ref.exists && st.Files >= 0 && cr.token == st.Token {
			used = min(cr.n, st.Files)
			st.Files -= used
		}
		kept, expired := fresh(st.Pending, now)
		var next fileCount
		refused := -1 // the files the scope holds, when the keys do not fit
		if !ref.exists || st.Files < 0 || st.Files+n > maxFiles && (!st.Counted || expired || g.expiresAt(key)) {
			used = -1
			files, counted, err := g.recount(ctx, ref, prefix, now)
			if err != nil {
				return r, -1, err
			}
			next = counted
			if files+n > maxFiles {
				refused = files // the recount is written all the same, so that the next refusal needs no listing
			} else {
				next.Files, next.Counted = files+n, false
				next.Pending = append(next.Pending, entries...)
			}
		} else {
			if st.Files+n > maxFiles {
				used = 0 // nothing written
				return r, st.Files, nil
			}
			next = fileCount{Files: st.Files + n, Token: st.Token, Pending: append(kept, entries...)}
		}
		written, err := g.writeCount(ctx, ref, next)
		if errors.Is(err, blob.ErrPrecondition) {
			if err := g.countBlocked(ctx, ref); err != nil {
				return r, -1, err
			}
			continue
		}
		if err != nil {
			return r, -1, err
		}
		if refused >= 0 {
			return r, refused, nil
		}
		return reservation{key: ckey, id: id, at: now, ref: written}, -1, nil
	}
	return r, -1, errCountBusy
}

// errCountBlocked is the failure of a create whose scope's file count
// cannot be written: a directory holds the count object's name (keys that
// another party put beneath it), on a store that keeps a name from being
// both. It lasts until someone removes them.
var errCountBlocked = errors.New("gate: the file count cannot be written: a directory holds its key")

// countBlocked tells, after a conditional write of the count ref was
// refused, whether the refusal was another writer's write (nil) or
// errCountBlocked: a count that was missing, whose Put(IfAbsent) was
// refused, with keys beneath its name. It costs one List, only then.
func (g *Tree) countBlocked(ctx context.Context, ref countRef) error {
	if ref.exists {
		return nil
	}
	for _, err := range g.store.List(ctx, ref.key+"/") {
		if err != nil {
			return err
		}
		return fmt.Errorf("%w %q", errCountBlocked, ref.key)
	}
	return nil
}

// recount lists the scope prefix and returns n, the number of its memory
// files plus the reservations of ref still pending whose keys the listing
// lacks, and the count to write over ref for it (a new token, Counted, the
// reservations kept).
func (g *Tree) recount(ctx context.Context, ref countRef, prefix string, now time.Time) (int, fileCount, error) {
	kept, _ := fresh(ref.state.Pending, now)
	inFlight := make(map[string]bool, len(kept))
	for _, e := range kept {
		inFlight[e.Key] = true
	}
	n := 0
	for info, err := range g.store.List(ctx, prefix) {
		if err != nil {
			return 0, fileCount{}, err
		}
		if blob.IsReserved(info.Key) {
			continue
		}
		n++
		delete(inFlight, info.Key) // landed: the listing counts it
	}
	kept = slices.DeleteFunc(kept, func(e pending) bool { return !inFlight[e.Key] })
	n += len(kept)
	return n, fileCount{Files: n, Token: newID(), Counted: true, Pending: kept}, nil
}

// confirm takes the reservation r off the pending list once its files
// landed. The count stays. An error means the list may still hold it: after
// errCountBusy (other writers kept changing the count) the caller keeps
// the file, since the count already includes it and a recount drops an
// entry whose file it lists; after a storage failure it withdraws the
// file, which leaves the count too high.
func (g *Tree) confirm(ctx context.Context, r reservation) error {
	ref := r.ref
	for attempt := range countAttempts {
		if attempt > 0 {
			if err := countWait(ctx, attempt-1); err != nil {
				return err
			}
			var err error
			if ref, err = g.readCount(ctx, r.key); err != nil {
				return fmt.Errorf("gate: reading the file count again: %w", err)
			}
		}
		left := slices.DeleteFunc(slices.Clone(ref.state.Pending), func(e pending) bool { return e.ID == r.id })
		if !ref.exists || len(left) == len(ref.state.Pending) {
			return nil // a recount saw the files, or an unreadable count
		}
		next := ref.state
		next.Pending = left
		_, err := g.writeCount(ctx, ref, next)
		if !errors.Is(err, blob.ErrPrecondition) {
			return err
		}
	}
	return errCountBusy
}

// release gives back the reservation r of a create that wrote no file
// because another writer holds the name, or of a move that moved nothing:
// each of its entries still pending comes off the list and off the count
// (a recount that listed another writer's file at an entry's key dropped
// that entry, and its count is right).
func (g *Tree) release(ctx context.Context, r reservation) {
	ref := r.ref
	for attempt := range countAttempts {
		if attempt > 0 {
			if countWait(ctx, attempt-1) != nil {
				return
			}
			var err error
			if ref, err = g.readCount(ctx, r.key); err != nil {
				g.countFailed(ctx, err)
				return
			}
		}
		left := slices.DeleteFunc(slices.Clone(ref.state.Pending), func(e pending) bool { return e.ID == r.id })
		gone := len(ref.state.Pending) - len(left) // the entries still pending
		if !ref.exists || gone == 0 || ref.state.Files < gone {
			return
		}
		next := ref.state
		next.Files -= gone
		next.Counted = false
		next.Pending = left
		_, err := g.writeCount(ctx, ref, next)
		if !errors.Is(err, blob.ErrPrecondition) {
			if err != nil {
				g.countFailed(ctx, err)
			}
			return
		}
	}
	g.countFailed(ctx, errCountBusy)
}

// subtract takes one file off the count ref, read before the file was
// deleted, as long as no recount wrote it since (its token is ref's), and
// marks the count changed in any case. Failures leave the count too high,
// which is safe; they are logged.
func (g *Tree) subtract(ctx context.Context, ref countRef) {
	_ = g.update(ctx, ref, func(st *fileCount, sameToken bool) bool {
		changed := st.Counted
		st.Counted = false
		if sameToken && st.Files >= 1 {
			st.Files--
			changed = true
		}
		return changed
	})
}

// sourceGone adds one to the count of key's scope, for a source that a
// move by copy copied and then found deleted before it deleted it: a
// delete by another writer took it off the count (count.go, the credit),
// while its copy stays, counted nowhere. When the source is gone because
// this move's own earlier delete landed unanswered, the count ends one too
// high, which is safe. Failures are logged.
func (g *Tree) sourceGone(ctx context.Context, key string) {
	if g.maxFilesAt(key) < 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	ref, _, err := g.known(ctx, g.countKey(key))
	if err != nil {
		g.countFailed(ctx, err)
		return
	}
	_ = g.update(ctx, ref, func(st *fileCount, _ bool) bool {
		st.Files++
		st.Counted = false
		return true
	})
}

// markChanged clears Counted on the count ref before a delete, so that
// the next create refused as full recounts even when the process stops
// before the count is lowered: the count is then too high by what the
// delete removed. It returns the count as it left it.
func (g *Tree) markChanged(ctx context.Context, ref countRef) countRef {
	return g.update(ctx, ref, func(st *fileCount, _ bool) bool {
		if !st.Counted {
			return false
		}
		st.Counted = false
		return true
	})
}

// update applies change to the count ref and writes it, re-reading on a
// conflict; change is told whether the count's token is still ref's (no
// recount wrote it since), and returns false when there is nothing to
// write. It returns the count as last read or written.
func (g *Tree) update(ctx context.Context, ref countRef, change func(st *fileCount, sameToken bool) bool) countRef {
	token := ref.state.Token
	for attempt := range countAttempts {
		if attempt > 0 {
			if countWait(ctx, attempt-1) != nil {
				return ref
			}
			var err error
			if ref, err = g.readCount(ctx, ref.key); err != nil {
				g.countFailed(ctx, err)
				return ref
			}
		}
		if !ref.exists || ref.state.Files < 0 {
			return ref
		}
		next := ref.state
		if !change(&next, next.Token == token) {
			return ref
		}
		written, err := g.writeCount(ctx, ref, next)
		if err == nil {
			return written
		}
		if !errors.Is(err, blob.ErrPrecondition) {
			g.countFailed(ctx, err)
			return ref
		}
	}
	g.countFailed(ctx, errCountBusy)
	return ref
}

// countFailed logs a failure to keep the count after the operation's own
// write landed: the count is then too high, which is safe.
func (g *Tree) countFailed(ctx context.Context, err error) {
	g.log.LogAttrs(ctx, slog.LevelWarn, "gate: the file count was not updated; it stays too high until it is recounted",
		slog.Any("error", err))
}

// countWait waits before attempt n+1 at the count, or until ctx is done,
// and then returns ctx's error: a random time between half and all of
// 1ms·2ⁿ, capped at 50ms. A write of the count is one small object, so
// racing writers retry sooner than a whole operation does.
func countWait(ctx context.Context, n int) error {
	d := min(time.Millisecond<<min(n, 10), 50*time.Millisecond)
	return sleep(ctx, d/2+rand.N(d/2+1))
}
