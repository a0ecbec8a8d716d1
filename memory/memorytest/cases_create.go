package memorytest

import (
	"fmt"
	"strings"

	"github.com/cloudmem/cloudmem/memory"
)

// create: docs/spec.md "create". Checks in this order: exists, ancestor is a
// file, size, store full.

func exists(path string) string { return "File " + path + " already exists" }

func ancestorIsFile(ancestor string) string {
	return "The path " + ancestor + " is a file, not a directory"
}

func tooBig(path string, n, limit int) string {
	return fmt.Sprintf("File %s would be %d bytes, over the limit of %d bytes per memory file", path, n, limit)
}

func full(n, limit int) string {
	return fmt.Sprintf("The memory directory is full: it holds %d files, the limit is %d. Delete or merge files first.", n, limit)
}

func createInput(path, text string) string {
	return in("command", "create", "path", path, "file_text", text)
}

func createCases() []Case {
	some := files("/memories/a.md", "old", "/memories/d/x.md", "x")
	with := func(pairs ...string) map[string]string { return merged(some, files(pairs...)) }
	limit := func(n int64) memory.Options { return memory.Options{MaxFileBytes: n} }
	return []Case{
		{Name: "a file at the root", Input: createInput("/memories/a.md", "hello\nworld\n"), Want: ok("File created successfully at: /memories/a.md"),
			WantFiles: files("/memories/a.md", "hello\nworld\n")},
		{Name: "an empty file", Input: createInput("/memories/e.md", ""), Want: ok(created("/memories/e.md")), WantFiles: files("/memories/e.md", "")},
		{Name: "content is stored byte for byte", Input: createInput("/memories/c.md", "tab\there\r\nnul\x00end \u00e9\U0001F600 $1 `x`"), Want: ok(created("/memories/c.md")),
			WantFiles: files("/memories/c.md", "tab\there\r\nnul\x00end \u00e9\U0001F600 $1 `x`")},
		{Name: "missing parents come into being", Files: some, Input: createInput("/memories/p/q/r.md", "r"), Want: ok(created("/memories/p/q/r.md")),
			WantFiles: with("/memories/p/q/r.md", "r")},
		{Name: "in an existing directory", Files: some, Input: createInput("/memories/d/y.md", "y"), Want: ok(created("/memories/d/y.md")),
			WantFiles: with("/memories/d/y.md", "y")},
		{Name: "a hidden file", Files: some, Input: createInput("/memories/d/.h", "h"), Want: ok(created("/memories/d/.h")), WantFiles: with("/memories/d/.h", "h")},
		{Name: "path named as sent", Files: some, Input: createInput("/memories//d/./z.md", "z"), Want: ok(created("/memories//d/./z.md")),
			WantFiles: with("/memories/d/z.md", "z")},
		{Name: "a name that is a key prefix of another", Files: some, Input: createInput("/memories/a", "a"), Want: ok(created("/memories/a")),
			WantFiles: with("/memories/a", "a")},

		// Exists: a file, a directory, the root.
		{Name: "exists as a file", Files: some, Input: createInput("/memories/a.md", "new"), Want: fail(exists("/memories/a.md"))},
		{Name: "exists as a file, named as sent", Files: some, Input: createInput("/memories/./a.md", "new"), Want: fail(exists("/memories/./a.md"))},
		{Name: "exists as a directory", Files: some, Input: createInput("/memories/d", "new"), Want: fail(exists("/memories/d"))},
		{Name: "exists as a directory, trailing slash", Files: some, Input: createInput("/memories/d/", "new"), Want: fail(exists("/memories/d/"))},
		{Name: "exists as a directory of hidden files", Files: files("/memories/h/.x", "x"), Input: createInput("/memories/h", "new"), Want: fail(exists("/memories/h"))},
		{Name: "the root", Input: createInput("/memories", "new"), Want: fail(exists("/memories"))},
		{Name: "the root with a slash", Files: some, Input: createInput("/memories/", "new"), Want: fail(exists("/memories/"))},
		{Name: "the root as /memories/.", Input: createInput("/memories/.", "new"), Want: fail(exists("/memories/."))},

		// An ancestor is a file, quoted as a /memories path.
		{Name: "parent is a file", Files: some, Input: createInput("/memories/a.md/b.md", "b"), Want: fail(ancestorIsFile("/memories/a.md"))},
		{Name: "grandparent is a file", Files: some, Input: createInput("/memories/a.md/b/c.md", "c"), Want: fail(ancestorIsFile("/memories/a.md"))},
		{Name: "deep ancestor is a file", Files: some, Input: createInput("/memories/d/x.md/y/z", "z"), Want: fail(ancestorIsFile("/memories/d/x.md"))},
		{Name: "ancestor quoted normalised", Files: some, Input: createInput("/memories//d/./x.md/y", "y"), Want: fail(ancestorIsFile("/memories/d/x.md"))},

		// Size: bytes, at exactly the limit and one over.
		{Name: "size at the limit", Options: limit(10), Input: createInput("/memories/s.md", "0123456789"), Want: ok(created("/memories/s.md")),
			WantFiles: files("/memories/s.md", "0123456789")},
		{Name: "size one over the limit", Options: limit(10), Input: createInput("/memories/s.md", "0123456789A"), Want: fail(tooBig("/memories/s.md", 11, 10))},
		{Name: "size counts bytes", Options: limit(11), Input: createInput("/memories/s.md", strings.Repeat("\u00e9", 6)), Want: fail(tooBig("/memories/s.md", 12, 11))},
		{Name: "size names the path as sent", Options: limit(1), Input: createInput("/memories//s.md", "ab"), Want: fail(tooBig("/memories//s.md", 2, 1))},
		{Name: "size at the default limit", Input: createInput("/memories/s.md", strings.Repeat("x", 100_000)), Want: ok(created("/memories/s.md")),
			WantFiles: files("/memories/s.md", strings.Repeat("x", 100_000))},
		{Name: "size over the default limit", Input: createInput("/memories/s.md", strings.Repeat("x", 100_001)), Want: fail(tooBig("/memories/s.md", 100001, 100000))},

		// Store full: hidden files count, bookkeeping keys do not.
		{Name: "full", Options: memory.Options{MaxFiles: 2}, Files: some, Input: createInput("/memories/b.md", "b"), Want: fail(full(2, 2))},
		{Name: "full, hidden files count", Options: memory.Options{MaxFiles: 2}, Files: files("/memories/a.md", "a", "/memories/.h", "h"),
			Input: createInput("/memories/b.md", "b"), Want: fail(full(2, 2))},
		{Name: "full, hidden files deep count", Options: memory.Options{MaxFiles: 3}, Files: files("/memories/a.md", "a", "/memories/x/.h", "h", "/memories/node_modules/m", "m"),
			Input: createInput("/memories/b.md", "b"), Want: fail(full(3, 3))},
		{Name: "bookkeeping keys do not count", Options: memory.Options{MaxFiles: 2}, Files: files("/memories/a.md", "a", "/memories/.cloudmem/key", "k", "/memories/.cloudmem/x/y", "y"),
			Input: createInput("/memories/b.md", "b"), Want: ok(created("/memories/b.md")),
			WantFiles: files("/memories/a.md", "a", "/memories/.cloudmem/key", "k", "/memories/.cloudmem/x/y", "y", "/memories/b.md", "b")},
		{Name: "nested bookkeeping keys do not count", Options: memory.Options{MaxFiles: 1}, Files: files("/memories/a/.cloudmem/key", "k", "/memories/b/c/.cloudmem/y", "y"),
			Input: createInput("/memories/b.md", "b"), Want: ok(created("/memories/b.md")),
			WantFiles: files("/memories/a/.cloudmem/key", "k", "/memories/b/c/.cloudmem/y", "y", "/memories/b.md", "b")},
		{Name: "full counts without bookkeeping keys", Options: memory.Options{MaxFiles: 1}, Files: files("/memories/a.md", "a", "/memories/.cloudmem/key", "k"),
			Input: createInput("/memories/b.md", "b"), Want: fail(full(1, 1))},
		{Name: "one under full", Options: memory.Options{MaxFiles: 3}, Files: some, Input: createInput("/memories/b.md", "b"), Want: ok(created("/memories/b.md")),
			WantFiles: with("/memories/b.md", "b")},
		{Name: "over full already", Options: memory.Options{MaxFiles: 1}, Files: some, Input: createInput("/memories/b.md", "b"), Want: fail(full(2, 1))},
		// One case at the default (2,000 files, slow on a real server);
		// the others use a small MaxFiles.
		{Name: "full at the default limit", Files: numberedFiles(2000), Input: createInput("/memories/b.md", "b"), Want: fail(full(2000, 2000))},
		{Name: "negative MaxFiles is no limit", Options: memory.Options{MaxFiles: -1}, Files: some, Input: createInput("/memories/b.md", "b"), Want: ok(created("/memories/b.md")),
			WantFiles: with("/memories/b.md", "b")},

		// The order of the checks.
		{Name: "order: exists before size", Options: limit(1), Files: some, Input: createInput("/memories/a.md", "long"), Want: fail(exists("/memories/a.md"))},
		{Name: "order: exists (directory) before full", Options: memory.Options{MaxFiles: 1}, Files: some, Input: createInput("/memories/d", "x"), Want: fail(exists("/memories/d"))},
		{Name: "order: ancestor before size", Options: limit(1), Files: some, Input: createInput("/memories/a.md/b", "long"), Want: fail(ancestorIsFile("/memories/a.md"))},
		{Name: "order: ancestor before full", Options: memory.Options{MaxFiles: 2}, Files: some, Input: createInput("/memories/a.md/b", "b"), Want: fail(ancestorIsFile("/memories/a.md"))},
		{Name: "order: size before full", Options: memory.Options{MaxFiles: 2, MaxFileBytes: 1}, Files: some, Input: createInput("/memories/b.md", "bb"), Want: fail(tooBig("/memories/b.md", 2, 1))},

		// Overwrite replaces a file, never a directory or the root.
		{Name: "overwrite replaces a file", Options: memory.Options{Overwrite: true}, Files: some, Input: createInput("/memories/a.md", "new"), Want: ok(created("/memories/a.md")),
			WantFiles: files("/memories/a.md", "new", "/memories/d/x.md", "x")},
		{Name: "overwrite creates a new file", Options: memory.Options{Overwrite: true}, Files: some, Input: createInput("/memories/b.md", "b"), Want: ok(created("/memories/b.md")),
			WantFiles: with("/memories/b.md", "b")},
		{Name: "overwrite does not replace a directory", Options: memory.Options{Overwrite: true}, Files: some, Input: createInput("/memories/d", "new"), Want: fail(exists("/memories/d"))},
		{Name: "overwrite does not replace the root", Options: memory.Options{Overwrite: true}, Files: some, Input: createInput("/memories", "new"), Want: fail(exists("/memories"))},
		{Name: "overwrite keeps the ancestor check", Options: memory.Options{Overwrite: true}, Files: some, Input: createInput("/memories/a.md/b", "b"), Want: fail(ancestorIsFile("/memories/a.md"))},
		{Name: "overwrite keeps the size limit", Options: memory.Options{Overwrite: true, MaxFileBytes: 2}, Files: some, Input: createInput("/memories/a.md", "new"), Want: fail(tooBig("/memories/a.md", 3, 2))},
	}
}

// numberedFiles returns n one-byte files spread over ten directories.
func numberedFiles(n int) map[string]string {
	out := make(map[string]string, n)
	for i := range n {
		out[fmt.Sprintf("/memories/d%d/f%04d", i%10, i)] = "x"
	}
	return out
}

// merged returns a new map with the entries of every m, later ones winning.
func merged(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
