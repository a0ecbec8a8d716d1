package memorytest

import (
	"fmt"
	"strings"

	"github.com/cloudmem/cloudmem/memory"
)

// view of a directory: docs/spec.md "view", "Directory".

func listingTruncated(shown, total int) string {
	return fmt.Sprintf("\n[Output truncated: showing %d of %d entries. View a subdirectory to see the rest.]", shown, total)
}

func notExist(path string) string {
	return "The path " + path + " does not exist. Please provide a valid path."
}

// tree is a store with hidden files, node_modules, bookkeeping keys, names
// that sort differently as names and as keys ("a" < "a-b.md" < "a.md", but
// "a-b.md" < "a.md" < "a/..."), and directories three levels deep.
var tree = files(
	"/memories/notes.md", "hello\n", // 6
	"/memories/a/x.md", "12345", // 5
	"/memories/a/b/deep.md", "1234567890", // 10
	"/memories/a/b/c/deeper.md", "xyz", // 3
	"/memories/a/.hidden", "1234", // 4: counted in a, not listed
	"/memories/a/node_modules/m", "m", // 1: counted in a, not listed
	"/memories/.secret/s.md", "ss", // 2: counted in the root, not listed
	"/memories/node_modules/pkg/index.js", "js", // 2: counted in the root, not listed
	"/memories/B.md", "b", // 1
	"/memories/a-b.md", "ab", // 2
	"/memories/a.md", "A", // 1
	"/memories/.cloudmem/key", "0123456789", // bookkeeping: counted nowhere
)

// treeRoot is the view of tree's root: 37 bytes of memory files in all,
// a holds 5+10+3+4+1 = 23, a/b holds 13.
var treeRoot = listing("/memories",
	"37B\t/memories",
	"1B\t/memories/B.md",
	"23B\t/memories/a/",
	"13B\t/memories/a/b/",
	"5B\t/memories/a/x.md",
	"2B\t/memories/a-b.md",
	"1B\t/memories/a.md",
	"6B\t/memories/notes.md",
)

var treeA = listing("/memories/a",
	"23B\t/memories/a",
	"13B\t/memories/a/b/",
	"3B\t/memories/a/b/c/",
	"10B\t/memories/a/b/deep.md",
	"5B\t/memories/a/x.md",
)

func viewDirCases() []Case {
	return []Case{
		{Name: "empty root", Input: viewPath("/memories"), Want: ok("Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories")},
		{Name: "root holding only bookkeeping keys is empty", Files: files("/memories/.cloudmem/key", "k", "/memories/.cloudmem/x/y", "yy"), Input: viewPath("/memories"), Want: ok(emptyRoot)},
		// docs/spec.md "Paths": a key with a reserved segment at any depth is
		// no memory file: no listing or size counts it, and a directory
		// holding nothing else does not exist.
		{Name: "nested bookkeeping keys count nowhere", Files: files("/memories/alice/a.md", "abc", "/memories/alice/.cloudmem/crypt-key", "0123456789",
			"/memories/alice/b/.cloudmem/x", "12345"), Input: viewPath("/memories"),
			Want: ok(listing("/memories", "3B\t/memories", "3B\t/memories/alice/", "3B\t/memories/alice/a.md"))},
		{Name: "nested bookkeeping keys count nowhere, in a directory", Files: files("/memories/alice/a.md", "abc", "/memories/alice/.cloudmem/crypt-key", "0123456789",
			"/memories/alice/b/.cloudmem/x", "12345"), Input: viewPath("/memories/alice"),
			Want: ok(listing("/memories/alice", "3B\t/memories/alice", "3B\t/memories/alice/a.md"))},
		{Name: "a directory of bookkeeping keys only does not exist", Files: files("/memories/a.md", "a", "/memories/bob/.cloudmem/crypt-key", "k"),
			Input: viewPath("/memories/bob"), Want: fail(notExist("/memories/bob"))},
		{Name: "root holding only hidden files", Files: files("/memories/.h", "abc"), Input: viewPath("/memories"), Want: ok(listing("/memories", "3B\t/memories"))},
		{Name: "one file", Files: files("/memories/a.md", "hi"), Input: viewPath("/memories"), Want: ok(listing("/memories", "2B\t/memories", "2B\t/memories/a.md"))},
		{Name: "empty file", Files: files("/memories/e", ""), Input: viewPath("/memories"), Want: ok(listing("/memories", "0B\t/memories", "0B\t/memories/e"))},
		{Name: "pre-order walk, two levels, sizes with hidden", Files: tree, Input: viewPath("/memories"), Want: ok(treeRoot)},
		{Name: "root with a trailing slash", Files: tree, Input: viewPath("/memories/"), Want: ok(treeRoot)},
		{Name: "root as /memories/.", Files: tree, Input: viewPath("/memories/."), Want: ok(treeRoot)},
		{Name: "subdirectory", Files: tree, Input: viewPath("/memories/a"), Want: ok(treeA)},
		{Name: "subdirectory is named normalised", Files: tree, Input: viewPath("/memories/a/"), Want: ok(treeA)},
		{Name: "subdirectory with repeated slashes and dots", Files: tree, Input: viewPath("/memories//a/./"), Want: ok(treeA)},
		{Name: "depth-2 directory of a subdirectory", Files: tree, Input: viewPath("/memories/a/b"), Want: ok(listing("/memories/a/b",
			"13B\t/memories/a/b",
			"3B\t/memories/a/b/c/",
			"3B\t/memories/a/b/c/deeper.md",
			"10B\t/memories/a/b/deep.md",
		))},
		{Name: "hidden directory named explicitly", Files: tree, Input: viewPath("/memories/.secret"), Want: ok(listing("/memories/.secret",
			"2B\t/memories/.secret", "2B\t/memories/.secret/s.md"))},
		{Name: "node_modules named explicitly", Files: tree, Input: viewPath("/memories/node_modules"), Want: ok(listing("/memories/node_modules",
			"2B\t/memories/node_modules", "2B\t/memories/node_modules/pkg/", "2B\t/memories/node_modules/pkg/index.js"))},
		{Name: "view_range is ignored on a directory", Files: tree, Input: `{"command":"view","path":"/memories","view_range":[5,1]}`, Want: ok(treeRoot)},
		{Name: "view_range [1,2] is ignored on a directory", Files: tree, Input: `{"command":"view","path":"/memories/a","view_range":[1,2]}`, Want: ok(treeA)},
		// docs/spec.md "view", "Directory": a listing longer than the view
		// limit (code points of the listing lines joined by "\n") keeps whole
		// lines while they fit, the directory's own line always, and notes
		// how many entries it showed. treeRoot's lines take 147 code points.
		{Name: "listing exactly at the view limit", Files: tree, Options: memory.Options{ViewLimit: 147}, Input: viewPath("/memories"), Want: ok(treeRoot)},
		{Name: "listing one over the view limit", Files: tree, Options: memory.Options{ViewLimit: 146}, Input: viewPath("/memories"),
			Want: ok(listing("/memories", "37B\t/memories", "1B\t/memories/B.md", "23B\t/memories/a/", "13B\t/memories/a/b/", "5B\t/memories/a/x.md",
				"2B\t/memories/a-b.md", "1B\t/memories/a.md") + listingTruncated(6, 7))},
		{Name: "listing truncated after two entries", Files: tree, Options: memory.Options{ViewLimit: 49}, Input: viewPath("/memories"),
			Want: ok(listing("/memories", "37B\t/memories", "1B\t/memories/B.md", "23B\t/memories/a/") + listingTruncated(2, 7))},
		{Name: "listing limit below the directory's own line", Files: tree, Options: memory.Options{ViewLimit: 10}, Input: viewPath("/memories"),
			Want: ok(listing("/memories", "37B\t/memories") + listingTruncated(0, 7))},
		{Name: "listing never truncated with no view limit", Files: tree, Options: memory.Options{ViewLimit: -1}, Input: viewPath("/memories"), Want: ok(treeRoot)},
		{Name: "listing limit counts code points", Files: files("/memories/z.md", "y", "/memories/\u00e9.md", "x"), Options: memory.Options{ViewLimit: 48},
			Input: viewPath("/memories"), Want: ok(listing("/memories", "2B\t/memories", "1B\t/memories/z.md", "1B\t/memories/\u00e9.md"))},
		{Name: "listing limit counts code points, one under", Files: files("/memories/z.md", "y", "/memories/\u00e9.md", "x"), Options: memory.Options{ViewLimit: 47},
			Input: viewPath("/memories"), Want: ok(listing("/memories", "2B\t/memories", "1B\t/memories/z.md") + listingTruncated(1, 2))},
		{Name: "listing of a subdirectory truncated", Files: tree, Options: memory.Options{ViewLimit: 40}, Input: viewPath("/memories/a"),
			Want: ok(listing("/memories/a", "23B\t/memories/a", "13B\t/memories/a/b/") + listingTruncated(1, 4))},
		{Name: "directory holding only hidden files", Files: files("/memories/h/.a", "a", "/memories/z", "zz"), Input: viewPath("/memories"),
			Want: ok(listing("/memories", "3B\t/memories", "1B\t/memories/h/", "2B\t/memories/z"))},
		{Name: "directory holding only hidden files, viewed", Files: files("/memories/h/.a", "a"), Input: viewPath("/memories/h"),
			Want: ok(listing("/memories/h", "1B\t/memories/h"))},
		{Name: "node_modules at depth 2 is skipped but counted", Files: files("/memories/p/node_modules/x", "xxxx", "/memories/p/q", "q"), Input: viewPath("/memories"),
			Want: ok(listing("/memories", "5B\t/memories", "5B\t/memories/p/", "1B\t/memories/p/q"))},
		{Name: "a name containing node_modules is listed", Files: files("/memories/node_modules2", "n", "/memories/my_node_modules/x", "x"), Input: viewPath("/memories"),
			Want: ok(listing("/memories", "2B\t/memories", "1B\t/memories/my_node_modules/", "1B\t/memories/my_node_modules/x", "1B\t/memories/node_modules2"))},
		{Name: "byte order of names", Files: files("/memories/z.md", "1", "/memories/\u00e9.md", "22", "/memories/Z.md", "333", "/memories/_", "4444", "/memories/10", "55555", "/memories/9", "666666"),
			Input: viewPath("/memories"),
			Want:  ok(listing("/memories", "21B\t/memories", "5B\t/memories/10", "6B\t/memories/9", "3B\t/memories/Z.md", "4B\t/memories/_", "1B\t/memories/z.md", "2B\t/memories/\u00e9.md"))},
		{Name: "directory sorted by its name, not its key", Files: files("/memories/a/b", "1", "/memories/a b", "22", "/memories/a!", "333", "/memories/a0", "4444"),
			Input: viewPath("/memories"),
			Want:  ok(listing("/memories", "10B\t/memories", "1B\t/memories/a/", "1B\t/memories/a/b", "2B\t/memories/a b", "3B\t/memories/a!", "4B\t/memories/a0"))},
		{Name: "missing directory", Files: tree, Input: viewPath("/memories/nope"), Want: fail(notExist("/memories/nope"))},
		{Name: "missing, with a trailing slash", Files: tree, Input: viewPath("/memories/nope/"), Want: fail(notExist("/memories/nope/"))},
		{Name: "a key prefix is not a directory", Files: tree, Input: viewPath("/memories/note"), Want: fail(notExist("/memories/note"))},
		{Name: "a path under a file does not exist", Files: tree, Input: viewPath("/memories/a.md/x"), Want: fail(notExist("/memories/a.md/x"))},
		sizeCase(),
	}
}

// sizeCase lists files whose sizes sit on the boundaries of the size
// format. The total is 3,691,006 bytes: 3.52M, printed 3.5M.
func sizeCase() Case {
	sizes := []struct {
		name string
		size int
		want string
	}{
		{"a0", 0, "0B"},
		{"b1023", 1023, "1023B"},
		{"c1024", 1024, "1K"},
		{"d1025", 1025, "1.0K"},
		{"e1280", 1280, "1.2K"}, // 1.25: half to even
		{"f1536", 1536, "1.5K"},
		{"g1792", 1792, "1.8K"}, // 1.75: half to even
		{"h2048", 2048, "2K"},
		{"i10239", 10239, "10.0K"},
		{"j1048575", 1048575, "1024.0K"},
		{"k1048576", 1048576, "1M"},
		{"l1572864", 1572864, "1.5M"},
	}
	f := map[string]string{"/memories/m/p": strings.Repeat("p", 512), "/memories/m/q": strings.Repeat("q", 512)}
	lines := []string{"3.5M\t/memories"}
	for _, s := range sizes {
		f["/memories/"+s.name] = strings.Repeat("x", s.size)
		lines = append(lines, s.want+"\t/memories/"+s.name)
	}
	lines = append(lines, "1K\t/memories/m/", "512B\t/memories/m/p", "512B\t/memories/m/q")
	return Case{Name: "size format boundaries", Files: f, Input: viewPath("/memories"), Want: ok(listing("/memories", lines...))}
}
