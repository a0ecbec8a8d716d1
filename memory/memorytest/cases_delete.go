package memorytest

// delete: docs/spec.md "delete".

func deleteInput(path string) string { return in("command", "delete", "path", path) }

func deleteCases() []Case {
	// Keys that share a's prefix but lie outside a must survive a's delete.
	start := files(
		"/memories/a/x.md", "x",
		"/memories/a/.h", "hidden",
		"/memories/a/b/c/d.md", "deep",
		"/memories/a/node_modules/m", "m",
		"/memories/a.md", "file a",
		"/memories/a-b/x", "dash",
		"/memories/ab", "ab",
		"/memories/.cloudmem/key", "k",
	)
	without := func(paths ...string) map[string]string {
		out := merged(start)
		for _, p := range paths {
			delete(out, p)
		}
		return out
	}
	allOfA := []string{"/memories/a/x.md", "/memories/a/.h", "/memories/a/b/c/d.md", "/memories/a/node_modules/m"}
	var c []Case
	for _, root := range []string{"/memories", "/memories/", "/memories//", "/memories/.", "/memories/./", "/memories//.//"} {
		c = append(c, Case{Name: "the root " + root, Files: start, Input: deleteInput(root), Want: fail("Cannot delete the /memories directory itself")})
	}
	c = append(c, Case{Name: "the empty root", Input: deleteInput("/memories/"), Want: fail("Cannot delete the /memories directory itself")})
	return append(c,
		Case{Name: "a file", Files: start, Input: deleteInput("/memories/a.md"), Want: ok("Successfully deleted /memories/a.md"), WantFiles: without("/memories/a.md")},
		Case{Name: "a file in a directory", Files: start, Input: deleteInput("/memories/a/x.md"), Want: ok("Successfully deleted /memories/a/x.md"),
			WantFiles: without("/memories/a/x.md")},
		Case{Name: "a hidden file", Files: start, Input: deleteInput("/memories/a/.h"), Want: ok("Successfully deleted /memories/a/.h"), WantFiles: without("/memories/a/.h")},
		Case{Name: "a file named as sent", Files: start, Input: deleteInput("/memories//a.md/"), Want: ok("Successfully deleted /memories//a.md/"), WantFiles: without("/memories/a.md")},
		Case{Name: "a directory with everything beneath", Files: start, Input: deleteInput("/memories/a"), Want: ok("Successfully deleted /memories/a"), WantFiles: without(allOfA...)},
		Case{Name: "a directory named with a slash", Files: start, Input: deleteInput("/memories/a/"), Want: ok("Successfully deleted /memories/a/"), WantFiles: without(allOfA...)},
		Case{Name: "a nested directory", Files: start, Input: deleteInput("/memories/a/b"), Want: ok("Successfully deleted /memories/a/b"), WantFiles: without("/memories/a/b/c/d.md")},
		Case{Name: "a directory of hidden files", Files: files("/memories/h/.a", "a", "/memories/h/.b/c", "c", "/memories/k", "k"), Input: deleteInput("/memories/h"),
			Want: ok("Successfully deleted /memories/h"), WantFiles: files("/memories/k", "k")},
		Case{Name: "a node_modules directory", Files: start, Input: deleteInput("/memories/a/node_modules"), Want: ok("Successfully deleted /memories/a/node_modules"),
			WantFiles: without("/memories/a/node_modules/m")},
		Case{Name: "the last file empties the root", Files: files("/memories/only.md", "o"), Input: deleteInput("/memories/only.md"), Want: ok("Successfully deleted /memories/only.md"),
			WantFiles: files()},
		Case{Name: "missing", Files: start, Input: deleteInput("/memories/nope"), Want: fail("The path /memories/nope does not exist")},
		Case{Name: "missing named as sent", Files: start, Input: deleteInput("/memories/./nope/"), Want: fail("The path /memories/./nope/ does not exist")},
		Case{Name: "a key prefix is not a directory", Files: start, Input: deleteInput("/memories/a-"), Want: fail("The path /memories/a- does not exist")},
		Case{Name: "under a file", Files: start, Input: deleteInput("/memories/a.md/x"), Want: fail("The path /memories/a.md/x does not exist")},
		Case{Name: "in an empty store", Input: deleteInput("/memories/x"), Want: fail("The path /memories/x does not exist")},
	)
}
