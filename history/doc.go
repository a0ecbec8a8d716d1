// Package history is a blob.Store wrapper that records every change made
// through it as an immutable version: who (the actor), when, what
// (created, modified, deleted, renamed from a path), the size and SHA-256
// of the content, and the content itself. Versions can be listed, shown,
// compared, restored, redacted, audited and pruned.
//
//	hs, err := history.New(inner, &history.Options{Actor: "ci@build-7"})
//	h := memory.New(hs, nil)                       // the model's changes are now versioned
//	ctx = blob.WithActor(ctx, "session 42")        // who, per call
//	vs, err := hs.History(ctx, "notes/a.md")       // oldest first
//	old, _, err := hs.Show(ctx, "notes/a.md", vs[0].ID)
//	_, err = hs.Restore(ctx, "notes/a.md", vs[0].ID, write) // write: h.Write, under the tree's rules
//
// # Records
//
// Each change writes one record object, under Namespace
// (".cloudmem/history/"), after the change itself has landed:
// ".cloudmem/history/H/ID", where H names the path (the first 128 bits of
// its SHA-256, in hex) and ID is the version id (16 hex digits: the
// writer's clock in milliseconds, then 20 random bits); a rename's record
// is ".cloudmem/history/H/ID.from.H2", H2 naming the old path. A record is
// one JSON header line followed by the content. The names are reserved
// (blob.IsReserved), so the memory handler never shows them or counts
// them in a limit, and the Store itself hides them: List skips them, and
// every other call on a key under Namespace fails with blob.ErrInvalidKey.
// Keys that are reserved for other layers (".cloudmem/crypt-key") are
// passed through unrecorded. Wrap the Store above encryption (storeurl
// does) and the records are encrypted like the memories; the names show
// only hashes of paths.
//
// # Store URLs
//
// Importing this package registers its parameters with storeurl, for every
// scheme (see ParseParams):
//
//	file:///srv/memories?history=on&history_keep=50&history_max_age=90d&history_actor=agent-7
//
// storeurl.Open puts the Store above encryption (storeurl.OrderHistory),
// so that the records are encrypted like the memories, and below readonly.
//
// # Cost
//
// A change costs exactly one extra storage call, a Put(IfAbsent) of its
// record; a read costs none. An unconditional Put or Delete (the memory
// handler's file delete is one) costs one Stat more, because the Store
// makes it conditional on the version it replaces so that the record
// knows it. The Store has no atomic rename, so a move is made key by key
// by its caller (the memory handler, or blob.Rename's fallback): each
// copy, a Put marked with blob.WithMoveCopy, gets one "renamed" record, and
// the deletes of the sources (blob.WithMoveSources) get none, so that a
// move interrupted half-way is completed by the same move sent again, as
// on a store without history. A tree delete deletes key by key too (see
// Store.DeleteTree), each key with its own record. The
// reading methods (History, Show, Diff, Audit) list the records and read
// those they need; they never write. LastChange lists only the records of
// one path and reads the latest.
//
// # Guarantees
//
//   - Every acknowledged change (a call that returned nil) has exactly one
//     version record. The record is written after the change landed, so
//     no record claims a change that did not land. A process that dies
//     between the change and its record leaves the change unrecorded and
//     unacknowledged; History then shows the path's present state as an
//     OpUnrecorded entry. A record write that fails returns an error
//     wrapping ErrUnrecorded (never blob.ErrPrecondition: the change did
//     land, and must not be retried as a lost race).
//   - Of writers racing on one file, each one whose write landed gets its
//     record, and the losers (blob.ErrPrecondition) get none.
//   - The versions of a path, in History's order, replay to its current
//     content: each record holds the full content its change left, and
//     the order follows the store versions each change replaced and
//     produced, not only the clocks.
//   - History survives renames and deletes: the history of a renamed
//     file lists the versions it had under its old path, and the history
//     of a deleted (or moved-away) path stays listable, ending with the
//     deletion (or the rename).
//   - Redact erases a version's content from every record that stores it
//     (and from every version of the file with the same content), by
//     rewriting those records in place; the records stay, marked with who
//     redacted them and when. It refuses to erase the file's current
//     content.
//   - Prune (on demand) applies the retention of Options.Keep and
//     Options.MaxAge and never removes a path's last version, the one
//     that is its current content, or a rename's record (the link to the
//     old path).
//
// # Turning history on and off
//
// Turning history on for a store that already holds files starts the
// history from that moment: a file that existed before has, until it
// changes, a History of one OpUnrecorded entry describing its present
// state, and the first version of it is its first change made with history
// on (whose content is the new content; the content from before is not
// kept). Turning history off (opening the store without the wrapper) leaves
// the records where they are: the memory handler still ignores them, and a
// Store opened later (the CLI's history commands open one for reading)
// reads them; changes made meanwhile show as OpUnrecorded.
//
// # Limits
//
// A List of the whole store through the wrapper (the memory handler's
// recount of its file count, a view of /memories) pages over the records
// as well and drops them, so its cost grows with the number of records:
// prune them. On
// servers that ignore conditional deletes (MinIO, fake-gcs-server), an
// unconditional delete that races a write may record the wrong prior
// version; the order of such records then falls back to their clocks. A
// Store wrapped around a mount table is refused: turn history on in each
// mounted store.
package history
