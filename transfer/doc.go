// Package transfer moves whole memory stores: it copies every memory file
// of one blob.Store to another and verifies the copy, exports a store to a
// directory or a tar stream, and imports such files back. It is what the
// cloudmem command's copy, export and import run, for Go programs to call
// directly.
//
// # Which objects move
//
// A store's memory files are the keys memory.Handler.Files lists: every key
// except the reserved bookkeeping ones (blob.IsReserved: any segment
// .cloudmem or .cloudmem-*, such as an encryption key), which belong to the
// store they are in and never move. Names in an import are checked with
// memory.Resolve, so an imported name is exactly a path the model could
// have written.
//
// # Guarantees
//
//   - Every write goes through the write gate. Copy and Import write each
//     file with memory.Handler.Write over the destination, so its rules
//     hold as for the model's commands: its file size limit and file limit
//     (a file they refuse is a Problem of kind ErrRefused, with the memory
//     tool's text, and the rest goes on), the file count the handlers keep
//     (no reset is needed afterwards), and a name that is never both a
//     file and a directory (ErrClash).
//   - Nothing is overwritten unseen. A missing file is created, never over
//     one a concurrent writer created; a file the destination holds with
//     other content is a Problem of kind ErrDiffers, or with Overwrite is
//     replaced only at the version just read, so a concurrent writer's
//     change is never lost.
//   - Every run can be repeated. A file the destination already holds with
//     the same bytes is skipped (Copy compares SHA-256, Import the bytes),
//     so after an interruption the same call finishes the job.
//   - Import checks everything first: a bad name, a link, a clash with the
//     store stops it before the first write.
//   - Reads are bounded: Copy, Verify and Export read no object over the
//     read limit of its store (memory.ReadLimit: the larger of the file
//     size and image limits, 5 MiB by default); such an object is a
//     Problem of kind ErrTooLarge and the rest goes on. ReadTar and ReadDir
//     leave a file over their limit unread, and Import skips it the same
//     way. ReadDir, and ReadTar given a spool directory, leave the content
//     on disk until Import reads each file to compare or write it, so an
//     import holds at most its jobs' files at once, whatever its size.
//   - Every wait honours ctx; a cancelled copy returns ctx's error, and
//     what it copied stays copied.
//
// # Errors
//
// Files that cannot be moved for a reason of their own (other content at the
// destination, a condition that kept failing, a difference found by Verify,
// a bad name in an import) are collected, sorted, and returned together as a
// *ProblemsError after every other file was handled; errors.Is(err,
// ErrProblems) is true for it. Any other failure (a store's, ctx's) stops
// the run: for Copy and Verify it is a *StoreError whose Side says which
// store failed.
//
// The functions are safe for concurrent use on distinct stores; on the same
// stores they behave like any other concurrent writers.
package transfer
