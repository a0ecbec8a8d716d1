// Package dirsync keeps a local directory of plain files and a memory store
// in step: a two-way sync, one pass at a time (Sync) or continuously (Watch).
//
// Its use is a memory folder that follows its user across machines: Claude
// Code keeps its automatic memory as files in a local folder, and each
// machine runs a sync of that folder against one shared store (a bucket, a
// Redis database, an encrypted store with history). The store sees exactly
// the keys the memory tool would write (/memories/notes.md is the key
// notes.md), so an agent using the memory tool on the same store sees the
// same files.
//
// # Decisions
//
// Each pass compares, file by file, the local folder, the store and the sync
// state: what both sides held at the end of the last pass (the content's
// SHA-256 on each side and the store's version). The state lives in a file
// of its own outside the folder and outside the store (Options.StateFile),
// one per folder and store on each machine.
//
//	local           store           action
//	unchanged       unchanged       nothing
//	changed         unchanged       upload, conditional on the recorded version
//	unchanged       changed         download (atomic replace)
//	changed         changed         the same bytes: record; different: a conflict
//	new             absent          upload, create-only
//	absent          new             download
//	new             new             as "changed, changed"
//	deleted         unchanged       delete in the store (guarded, see below)
//	unchanged       deleted         delete locally (guarded)
//	deleted         changed         the change wins: download
//	changed         deleted         the change wins: upload, create-only
//	deleted         deleted         forget the file
//
// "Changed" is decided by content: a local file whose size and modification
// time match the state is taken as unchanged without reading it; a store
// object whose version matches is unchanged; otherwise its bytes are hashed
// and compared.
//
// # Conflicts
//
// When both sides changed a file to different contents, nothing is lost and
// both sides end the pass alike: the store's content keeps the name, and the
// local content is kept under a conflict name beside it, on both sides:
// notes.md becomes notes.md (the store's content) and
// notes.conflict-MACHINE-1a2b3c4d.md (this machine's), where the hex digits
// start the SHA-256 of the local content. The name is the same however often
// the pass is retried, so an interrupted conflict resolution never makes a
// second copy. Conflicts are counted in the Report and make Sync return an
// error wrapping ErrConflict.
//
// # Deletes
//
// A delete propagates only when the other side still holds exactly what the
// state recorded, and is conditional on it (a store object rewritten in the
// meantime is not deleted: the change wins). Two guards stand in front of it:
//
//   - Options.MaxDeletes (default 20): a pass that would delete more files
//     than this, on either side, changes nothing at all and returns an error
//     wrapping ErrTooManyDeletes, unless Options.AllowDeletes is set.
//   - Options.DeleteGrace: a delete propagates only once it has been seen for
//     this long (Watch uses a grace period; a single Sync pass, none).
//
// # Guarantees
//
//   - Store writes are conditional (create-only or on the recorded version),
//     so two machines syncing the same file at the same moment never
//     overwrite each other: the loser of the race sees a conflict.
//   - Local writes are atomic (a temporary file, fsync, rename) and re-check
//     the local file just before replacing or removing it, so an edit made
//     during the pass is not overwritten (it is picked up by the next pass);
//     a window of a few system calls remains, as with any sync tool.
//   - A pass interrupted at any point (a crash, a failed storage call) and
//     run again converges with nothing lost: every decision rests on content
//     hashes, so work done before the interruption is recognised, not redone
//     or mistaken for a conflict.
//   - Symbolic links in the folder are never followed: a link is skipped with
//     a reason, and no write goes through a linked directory. All local
//     access goes through an os.Root of the folder.
//   - Files the memory tool could not hold are skipped with a reason, never
//     silently: names the memory tool refuses (reserved .cloudmem names,
//     control characters, over-long paths), files over Options.MaxFileBytes,
//     new files beyond Options.MaxFiles, and anything that is not a regular
//     file.
//   - Only one pass runs at a time for one state file: a second Sync or Watch
//     of the same folder and store fails at once with ErrBusy.
//
// # Concurrency
//
// Sync and Watch are safe to call from several goroutines; passes over the
// same state file are serialised by a lock file beside it (which also holds
// between processes).
package dirsync
