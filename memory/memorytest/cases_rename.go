package memorytest

import (
	"strings"

	"github.com/cloudmem/cloudmem/memory"
)

// rename: docs/spec.md "rename". After both paths are valid, in this order:
// root, old_path missing, destination exists, into itself, ancestor is a
// file.

func renameInput(from, to string) string {
	return in("command", "rename", "old_path", from, "new_path", to)
}

func renamed(from, to string) string { return "Successfully renamed " + from + " to " + to }

func destExists(path string) string { return "The destination " + path + " already exists" }

func intoItself(from, to string) string { return "Cannot move " + from + " into itself (" + to + ")" }

const renameRoot = "Cannot rename the /memories directory itself"

func renameCases() []Case {
	start := files(
		"/memories/f.md", "file f",
		"/memories/g.md", "file g",
		"/memories/d/x.md", "x",
		"/memories/d/.h", "hidden",
		"/memories/d/s/y.md", "y",
		"/memories/d/node_modules/m", "m",
		"/memories/d2/z", "z",
		"/memories/d.md", "d.md",
		"/memories/h/.a", "only hidden",
		"/memories/.cloudmem/key", "k",
	)
	// moved returns start with the files at from moved to to.
	moved := func(pairs ...string) map[string]string {
		out := merged(start)
		for i := 0; i < len(pairs); i += 2 {
			out[pairs[i+1]] = out[pairs[i]]
			delete(out, pairs[i])
		}
		return out
	}
	dTo := func(dir string) map[string]string {
		return moved("/memories/d/x.md", dir+"/x.md", "/memories/d/.h", dir+"/.h", "/memories/d/s/y.md", dir+"/s/y.md",
			"/memories/d/node_modules/m", dir+"/node_modules/m")
	}
	// A file whose path is exactly 1,024 bytes; renaming its directory l to
	// ll makes it 1,025, which a rename does not refuse.
	rest := strings.TrimPrefix(pathOfLen(1022, 200), "/memories")
	long := files("/memories/l"+rest, "long")
	return []Case{
		// Successes.
		{Name: "a file", Files: start, Input: renameInput("/memories/f.md", "/memories/h.md"),
			Want: ok("Successfully renamed /memories/f.md to /memories/h.md"), WantFiles: moved("/memories/f.md", "/memories/h.md")},
		{Name: "a file into an existing directory", Files: start, Input: renameInput("/memories/f.md", "/memories/d/f.md"),
			Want: ok(renamed("/memories/f.md", "/memories/d/f.md")), WantFiles: moved("/memories/f.md", "/memories/d/f.md")},
		{Name: "a file across directories, creating parents", Files: start, Input: renameInput("/memories/d/s/y.md", "/memories/n/e/w.md"),
			Want: ok(renamed("/memories/d/s/y.md", "/memories/n/e/w.md")), WantFiles: moved("/memories/d/s/y.md", "/memories/n/e/w.md")},
		{Name: "a file up to the root", Files: start, Input: renameInput("/memories/d/x.md", "/memories/x.md"),
			Want: ok(renamed("/memories/d/x.md", "/memories/x.md")), WantFiles: moved("/memories/d/x.md", "/memories/x.md")},
		{Name: "a hidden file", Files: start, Input: renameInput("/memories/d/.h", "/memories/visible"),
			Want: ok(renamed("/memories/d/.h", "/memories/visible")), WantFiles: moved("/memories/d/.h", "/memories/visible")},
		{Name: "paths named as sent", Files: start, Input: renameInput("/memories//f.md", "/memories/./h.md/"),
			Want: ok(renamed("/memories//f.md", "/memories/./h.md/")), WantFiles: moved("/memories/f.md", "/memories/h.md")},
		{Name: "a directory with everything beneath", Files: start, Input: renameInput("/memories/d", "/memories/e"),
			Want: ok(renamed("/memories/d", "/memories/e")), WantFiles: dTo("/memories/e")},
		{Name: "a directory to a name it prefixes", Files: start, Input: renameInput("/memories/d", "/memories/d-new"),
			Want: ok(renamed("/memories/d", "/memories/d-new")), WantFiles: dTo("/memories/d-new")},
		{Name: "a directory into new parents", Files: start, Input: renameInput("/memories/d/", "/memories/p/q/d"),
			Want: ok(renamed("/memories/d/", "/memories/p/q/d")), WantFiles: dTo("/memories/p/q/d")},
		{Name: "a nested directory out", Files: start, Input: renameInput("/memories/d/s", "/memories/s"),
			Want: ok(renamed("/memories/d/s", "/memories/s")), WantFiles: moved("/memories/d/s/y.md", "/memories/s/y.md")},
		{Name: "a directory of hidden files", Files: start, Input: renameInput("/memories/h", "/memories/k"),
			Want: ok(renamed("/memories/h", "/memories/k")), WantFiles: moved("/memories/h/.a", "/memories/k/.a")},
		{Name: "a directory rename may lengthen a path past the limit", Files: long, Input: renameInput("/memories/l", "/memories/ll"),
			Want: ok(renamed("/memories/l", "/memories/ll")), WantFiles: files("/memories/ll"+rest, "long")},

		// The root.
		{Name: "the root", Files: start, Input: renameInput("/memories", "/memories/new"), Want: fail(renameRoot)},
		{Name: "the root with a slash", Files: start, Input: renameInput("/memories/", "/memories/new"), Want: fail(renameRoot)},
		{Name: "the root as /memories/.", Files: start, Input: renameInput("/memories/.", "/memories/new"), Want: fail(renameRoot)},
		{Name: "the empty root", Input: renameInput("/memories//", "/memories/new"), Want: fail(renameRoot)},
		{Name: "order: root before destination exists", Files: start, Input: renameInput("/memories", "/memories/f.md"), Want: fail(renameRoot)},

		// old_path missing: nothing is created.
		{Name: "missing", Files: start, Input: renameInput("/memories/nope", "/memories/new/x"), Want: fail("The path /memories/nope does not exist")},
		{Name: "missing named as sent", Files: start, Input: renameInput("/memories/./nope/", "/memories/x"), Want: fail("The path /memories/./nope/ does not exist")},
		{Name: "missing under a file", Files: start, Input: renameInput("/memories/f.md/x", "/memories/x"), Want: fail("The path /memories/f.md/x does not exist")},
		{Name: "a key prefix is not a directory", Files: start, Input: renameInput("/memories/d.", "/memories/x"), Want: fail("The path /memories/d. does not exist")},
		{Name: "order: missing before destination exists", Files: start, Input: renameInput("/memories/nope", "/memories/f.md"), Want: fail("The path /memories/nope does not exist")},
		{Name: "order: missing before ancestor", Files: start, Input: renameInput("/memories/nope", "/memories/f.md/x"), Want: fail("The path /memories/nope does not exist")},

		// The destination exists.
		{Name: "destination is a file", Files: start, Input: renameInput("/memories/f.md", "/memories/g.md"), Want: fail(destExists("/memories/g.md"))},
		{Name: "destination is a directory", Files: start, Input: renameInput("/memories/f.md", "/memories/d"), Want: fail(destExists("/memories/d"))},
		{Name: "destination is a directory of hidden files", Files: start, Input: renameInput("/memories/d2", "/memories/h"), Want: fail(destExists("/memories/h"))},
		{Name: "destination is the root", Files: start, Input: renameInput("/memories/f.md", "/memories"), Want: fail(destExists("/memories"))},
		{Name: "destination is the root with a slash", Files: start, Input: renameInput("/memories/d", "/memories/"), Want: fail(destExists("/memories/"))},
		{Name: "destination named as sent", Files: start, Input: renameInput("/memories/d2", "/memories//g.md"), Want: fail(destExists("/memories//g.md"))},
		{Name: "destination is the source file", Files: start, Input: renameInput("/memories/f.md", "/memories/f.md"), Want: fail(destExists("/memories/f.md"))},
		{Name: "order: destination is the source directory, before into itself", Files: start, Input: renameInput("/memories/d", "/memories/d/"), Want: fail(destExists("/memories/d/"))},
		{Name: "overwrite does not apply to rename", Options: memory.Options{Overwrite: true}, Files: start, Input: renameInput("/memories/f.md", "/memories/g.md"),
			Want: fail(destExists("/memories/g.md"))},

		// Into itself.
		{Name: "a directory into itself", Files: start, Input: renameInput("/memories/d", "/memories/d/sub"), Want: fail(intoItself("/memories/d", "/memories/d/sub"))},
		{Name: "a directory into its own subdirectory", Files: start, Input: renameInput("/memories/d", "/memories/d/s/t"), Want: fail(intoItself("/memories/d", "/memories/d/s/t"))},
		{Name: "into itself, named as sent", Files: start, Input: renameInput("/memories/d/", "/memories//d/e"), Want: fail(intoItself("/memories/d/", "/memories//d/e"))},
		{Name: "order: a file into itself, before ancestor", Files: start, Input: renameInput("/memories/f.md", "/memories/f.md/x"), Want: fail(intoItself("/memories/f.md", "/memories/f.md/x"))},

		// An ancestor of new_path is a file.
		{Name: "parent of the destination is a file", Files: start, Input: renameInput("/memories/g.md", "/memories/f.md/g.md"), Want: fail(ancestorIsFile("/memories/f.md"))},
		{Name: "deep ancestor of the destination is a file", Files: start, Input: renameInput("/memories/g.md", "/memories/d/x.md/deep/g.md"), Want: fail(ancestorIsFile("/memories/d/x.md"))},
		{Name: "ancestor of a directory's destination is a file", Files: start, Input: renameInput("/memories/d2", "/memories/f.md/d2"), Want: fail(ancestorIsFile("/memories/f.md"))},
		{Name: "ancestor quoted normalised", Files: start, Input: renameInput("/memories/g.md", "/memories//f.md/./g"), Want: fail(ancestorIsFile("/memories/f.md"))},
	}
}
