// Package file is a blob.Store over a local directory: the embedded
// default store of cloudmem. Each object is one regular file, so the
// memories can be read, backed up and versioned with ordinary tools.
//
// # URL
//
//	file:///abs/dir             the directory /abs/dir
//	file://localhost/abs/dir    the same
//	file:rel/dir                a directory relative to the working directory
//	./memory, /abs/dir          a bare path, with no scheme, means the same
//
// The URL takes only the parameters storeurl applies to every scheme.
// A URL's directory that does not exist is created by the first write
// (Options.CreateOnWrite): until then the store reads as empty and nothing
// is made on disk. Opened read-only (readonly=true, storeurl.OpenReadOnly)
// a missing directory is an error wrapping ErrNoStore instead:
//
//	the store does not exist: no directory DIR (the first write creates it)
//
// # Layout
//
// Key "a/b" is the file ROOT/a/b. Directories are created with mode 0700 as
// writes need them and removed when their last object goes (never ROOT
// itself; a failed write may leave an empty one, which nothing lists);
// files have mode 0600, whatever the umask. The store keeps a few names for
// itself, all starting with ".cloudmem-": the lock file ROOT/.cloudmem-lock,
// up to 4,096 empty key lock files in ROOT/.cloudmem-keylocks/, temporary
// files ROOT/.cloudmem-tmp-* of writes in flight (or interrupted by a
// crash: Open removes those over an hour old), and directories ROOT/.cloudmem-trash-* being deleted. A key with
// any segment that starts with ".cloudmem-", in any case of its letters as
// blob.EqualFold compares them (a case-insensitive file system keeps
// ".CLOUDMEM-lock" at the lock file), is refused with blob.ErrInvalidKey,
// and listings skip such names. (The directory
// ".cloudmem/" is not reserved here: the encryption layer stores its key
// object there, as any other key.)
//
// # Guarantees
//
// Writes are atomic: Put writes a temporary file, syncs it, renames it into
// place and syncs the directory (and, when it made directories for it, the
// ones above), so readers and crashes see the old object
// or the new one, never a mix (Options.NoSync trades the syncs for speed,
// and a write whose context was made by blob.WithLazySync skips them:
// still atomic, but a crash of the machine may undo it).
// Renames need one file system: a mount point below ROOT makes writes under
// it fail.
// Every write (Put, Delete, Rename, DeleteTree) runs its check-and-commit
// step under one store-wide lock: an in-process lock plus an advisory
// flock(2) on the lock file, so conditional writes are exact across
// goroutines and across processes that share the directory; a writer
// waiting for it sleeps in flock(2), which hands it over the moment it is
// released. Reads take no lock. Rename is atomic (one rename(2) of a file or
// of a directory, which fails rather than replaces if the destination
// appeared) and durable: it syncs each directory whose entries it changed,
// once, the source's and the destination's at the same time; a Delete syncs
// the directory it removed the file from. DeleteTree renames the directory
// aside in one step and then removes it.
//
// The store is a blob.Locker: Lock(key) takes a flock on the key's lock
// file, held across a read-modify-write (the memory handler's str_replace
// and insert), so writers of one file, in any goroutine or process, take
// turns instead of losing races to each other; writers of different files
// do not wait for each other (two keys share a lock file with a chance of 1
// in 4,096, which makes one wait, never breaks exclusion). The lock is
// released by its unlock function, or when the process exits. A store
// opened with Options.CreateOnWrite whose directory does not exist yet has
// no lock file: until the directory is made, Lock excludes only the
// callers in the same process.
//
// Versions are derived from each file's inode number, size, mtime and ctime,
// so they survive restarts and are shared by every process; the store sets
// each new file's mtime past the previous one's so that versions never
// repeat (see the comment on version in the source).
//
// Symbolic links under the root are never followed: a link where an object
// or a directory would be reads as missing and is skipped by listings; a
// write through a linked directory fails, and a Put at the link's own name
// replaces the link, never its target. The root itself may be a link.
//
// A file system cannot hold a file and a directory of the same name, so
// unlike the blob contract in general, the keys "a" and "a/b" cannot both
// exist: the write that would create the second fails with an error
// wrapping blob.ErrPrecondition and changes nothing.
//
// The store is safe for concurrent use. It needs a Unix system; on others
// Open returns an error.
package file
