package memorytest

import (
	"strings"

	"github.com/cloudmem/cloudmem/memory"
)

// Paths: docs/spec.md "Paths". Checked in this order, the first failure
// reported: prefix, escape, characters, length, reserved. None of these
// errors may touch storage (Run checks that).

func badPrefix(path string) string { return "Path must start with /memories, got: " + path }
func escapes(path string) string   { return "Path " + path + " would escape /memories directory" }
func badChars(path string) string  { return "Path " + path + " contains invalid characters" }
func tooLong(path string) string   { return "Path " + path + " is too long" }
func reserved(path string) string  { return "Path " + path + " is reserved" }

func created(path string) string { return "File created successfully at: " + path }

// viewPath is the input of a view of path.
func viewPath(path string) string { return in("command", "view", "path", path) }

// createPath is the input of a create of path holding "x".
func createPath(path string) string { return in("command", "create", "path", path, "file_text", "x") }

// pathOfLen returns "/memories/" followed by segments of at most seg bytes
// of 'a'..'z', joined by '/', n bytes in all.
func pathOfLen(n, seg int) string {
	var b strings.Builder
	b.WriteString("/memories")
	for i := 0; b.Len() < n; i++ {
		b.WriteByte('/')
		size := min(seg, n-b.Len())
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), size))
	}
	return b.String()
}

func pathCases() []Case {
	var c []Case
	// Prefix.
	for _, p := range []string{"/memoriesX", "/memories_backup/x", "memories/x", "/etc/passwd", "", "/", "/Memories/x",
		" /memories", "/memories%2fx", `\memories\x`, "/memories\\x", "//memories/x", "./memories/x"} {
		c = append(c, Case{Name: "prefix " + p, Input: viewPath(p), Want: fail(badPrefix(p))})
	}
	// The root in every spelling; the listing names it /memories.
	for _, p := range []string{"/memories", "/memories/", "/memories//", "/memories/.", "/memories/./", "/memories//.//./"} {
		c = append(c, Case{Name: "root " + p, Input: viewPath(p), Want: ok(emptyRoot)})
	}
	// Escape: any ".." segment, any backslash, a percent-encoded '.', '/'
	// or '\', or %25. The store holds b.md, so "/memories/a/../b.md" would
	// name a real file if it were let through.
	for _, p := range []string{"/memories/..", "/memories/../", "/memories/../etc/passwd", "/memories/a/../b.md", "/memories/a/..",
		"/memories/./../memories", "/memories/%2e%2e/x", "/memories/%2E%2E", "/memories/%2E", "/memories/a%2eb", "/memories/a%2fb", "/memories/a%2Fb",
		"/memories/a%5cb", "/memories/a%5Cb", "/memories/%25", "/memories/a%252e", "/memories/a\\b", "/memories/..\\x", "/memories/\\"} {
		c = append(c, Case{Name: "escape " + p, Files: files("/memories/b.md", "b"), Input: viewPath(p), Want: fail(escapes(p))})
	}
	// Look-alikes that are legal names.
	for _, p := range []struct{ path, key string }{
		{"/memories/..a", "..a"}, {"/memories/a..", "a.."}, {"/memories/...", "..."}, {"/memories/a%20b", "a%20b"},
		{"/memories/a%41", "a%41"}, {"/memories/100%", "100%"}, {"/memories/%2", "%2"}, {"/memories/a%2", "a%2"},
		{"/memories/.hidden", ".hidden"}, {"/memories/.cloudmemX", ".cloudmemX"}, {"/memories/a/.cloudmemX", "a/.cloudmemX"},
		{"/memories/.cloudmem.md", ".cloudmem.md"}, {"/memories/a/.cloudmem_x", "a/.cloudmem_x"}, {"/memories/x.cloudmem", "x.cloudmem"},
		{"/memories/x/", "x"}, {"/memories//d//./f.md", "d/f.md"},
	} {
		c = append(c, Case{Name: "legal " + p.path, Input: createPath(p.path), Want: ok(created(p.path)), WantFiles: files("/memories/"+p.key, "x")})
	}
	// Characters: C0 controls and U+007F are refused, C1 controls are not.
	for _, p := range []string{"/memories/a\x00b", "/memories/\x00", "/memories/a\x01", "/memories/a\tb", "/memories/a\nb", "/memories/a\rb",
		"/memories/a\x1f", "/memories/a\x7f", "/memories/\x00/x", "/memories/\x1b[31m"} {
		c = append(c, Case{Name: "characters " + p, Input: viewPath(p), Want: fail(badChars(p))})
	}
	for _, p := range []string{"/memories/a\u0080b", "/memories/a\u0085b", "/memories/a\u009fb", "/memories/\u00a0", "/memories/\u2028"} {
		c = append(c, Case{Name: "legal " + p, Input: createPath(p), Want: ok(created(p)), WantFiles: files(p, "x")})
	}
	c = append(c, Case{Name: "names are not Unicode-normalised",
		Files: files("/memories/e\u0301.md", "decomposed"), Input: createPath("/memories/\u00e9.md"), Want: ok(created("/memories/\u00e9.md")),
		WantFiles: files("/memories/e\u0301.md", "decomposed", "/memories/\u00e9.md", "x")})
	c = append(c, lengthCases()...)
	c = append(c, reservedCases()...)
	c = append(c, keyBudgetCases()...)
	c = append(c, orderCases()...)
	return c
}

func lengthCases() []Case {
	p1024 := pathOfLen(1024, 200)
	p1025 := pathOfLen(1025, 200)
	seg255 := "/memories/" + strings.Repeat("s", 255)
	seg256 := "/memories/d/" + strings.Repeat("s", 256) + "/f.md"
	wide256 := "/memories/" + strings.Repeat("\u00e9", 128)          // 128 characters, 256 bytes
	wide255 := "/memories/" + strings.Repeat("\u00e9", 127) + "a"    // 128 characters, 255 bytes
	slashes := "/memories/" + strings.Repeat("/", 1014) + "a"        // 1,025 bytes as sent, /memories/a once normalised
	dots := "/memories" + strings.Repeat("/.", 507) + "/a"           // 1,025 bytes as sent
	dots1024 := "/memories" + strings.Repeat("/.", 506) + "/a" + "b" // 1,024 bytes as sent
	huge := "/memories/" + strings.Repeat("a", 20000)                // longer than the view limit
	return []Case{
		{Name: "1025-byte path", Input: viewPath(p1025), Want: fail(tooLong(p1025))},
		{Name: "1025-byte path on create", Input: createPath(p1025), Want: fail(tooLong(p1025))},
		{Name: "1024-byte path", Input: createPath(p1024), Want: ok(created(p1024)), WantFiles: files(p1024, "x")},
		{Name: "256-byte segment", Input: createPath(seg256), Want: fail(tooLong(seg256))},
		{Name: "255-byte segment", Input: createPath(seg255), Want: ok(created(seg255)), WantFiles: files(seg255, "x")},
		{Name: "256-byte segment of 128 characters", Input: createPath(wide256), Want: fail(tooLong(wide256))},
		{Name: "255-byte segment of 128 characters", Input: createPath(wide255), Want: ok(created(wide255)), WantFiles: files(wide255, "x")},
		{Name: "length counts the path as sent: slashes", Input: createPath(slashes), Want: fail(tooLong(slashes))},
		{Name: "length counts the path as sent: dot segments", Input: createPath(dots), Want: fail(tooLong(dots))},
		{Name: "1024 bytes as sent with dot segments", Input: createPath(dots1024), Want: ok(created(dots1024)), WantFiles: files("/memories/ab", "x")},

		// docs/spec.md "str_replace": any text of the model's that an error
		// echoes, a path too, is cut at the view limit (code points) and
		// followed by "…".
		{Name: "too-long path echoed cut at the default view limit", Input: viewPath(huge), Want: fail(tooLong(huge[:16000] + "…"))},
		{Name: "too-long path echoed cut at the view limit", Options: memory.Options{ViewLimit: 12}, Input: createPath(p1025), Want: fail(tooLong(p1025[:12] + "…"))},
		{Name: "too-long path echoed whole with no view limit", Options: memory.Options{ViewLimit: -1}, Input: viewPath(huge), Want: fail(tooLong(huge))},
		{Name: "bad prefix echoed cut at the view limit", Options: memory.Options{ViewLimit: 12}, Input: viewPath("/memoriesX/\u00e9\u00e9\u00e9"), Want: fail(badPrefix("/memoriesX/\u00e9…"))},
		{Name: "escaping path echoed cut at the view limit", Options: memory.Options{ViewLimit: 12}, Input: viewPath("/memories/../abc"), Want: fail(escapes("/memories/..…"))},
		{Name: "invalid characters echoed cut at the view limit", Options: memory.Options{ViewLimit: 12}, Input: viewPath("/memories/a\tbcd"), Want: fail(badChars("/memories/a\t…"))},
	}
}

func reservedCases() []Case {
	bk := files("/memories/.cloudmem/key", "wrapped key", "/memories/a.md", "a")
	var c []Case
	for _, p := range []string{"/memories/.cloudmem", "/memories/.cloudmem/", "/memories/.cloudmem/key", "/memories//.cloudmem/key",
		"/memories/./.cloudmem", "/memories/.cloudmem/./key"} {
		c = append(c, Case{Name: "reserved view " + p, Files: bk, Input: viewPath(p), Want: fail(reserved(p))})
	}
	// docs/spec.md "Paths": reserved at every depth, and any segment
	// starting with ".cloudmem-" too (a store opened with prefix=team must
	// not reach the bookkeeping of the store prefix=team/alice), in any
	// case (a case-insensitive file system keeps .CLOUDMEM at .cloudmem).
	nested := files("/memories/alice/.cloudmem/crypt-key", "wrapped key", "/memories/alice/a.md", "a")
	for _, p := range []string{"/memories/alice/.cloudmem", "/memories/alice/.cloudmem/crypt-key", "/memories/a/b/.cloudmem/x",
		"/memories/.cloudmem-lock", "/memories/a/.cloudmem-tmp-1", "/memories/.cloudmem-/x", "/memories/alice/.cloudmem/",
		"/memories/.CLOUDMEM/files", "/memories/alice/.CloudMem-lock"} {
		c = append(c,
			Case{Name: "reserved at depth: view " + p, Files: nested, Input: viewPath(p), Want: fail(reserved(p))},
			Case{Name: "reserved at depth: create " + p, Files: nested, Input: createPath(p), Want: fail(reserved(p))},
			Case{Name: "reserved at depth: delete " + p, Files: nested, Input: in("command", "delete", "path", p), Want: fail(reserved(p))},
		)
	}
	c = append(c,
		Case{Name: "reserved at depth: rename destination", Files: nested,
			Input: in("command", "rename", "old_path", "/memories/alice/a.md", "new_path", "/memories/alice/.cloudmem-x/a.md"),
			Want:  fail(reserved("/memories/alice/.cloudmem-x/a.md"))},
		Case{Name: "reserved at depth: str_replace", Files: nested,
			Input: in("command", "str_replace", "path", "/memories/alice/.cloudmem/crypt-key", "old_str", "wrapped", "new_str", "x"),
			Want:  fail(reserved("/memories/alice/.cloudmem/crypt-key"))},
		Case{Name: "reserved at depth: insert", Files: nested,
			Input: in("command", "insert", "path", "/memories/.cloudmem-lock", "insert_line", 0, "insert_text", "x"),
			Want:  fail(reserved("/memories/.cloudmem-lock"))},
	)
	return append(c,
		Case{Name: "reserved create", Files: bk, Input: createPath("/memories/.cloudmem/new"), Want: fail(reserved("/memories/.cloudmem/new"))},
		Case{Name: "reserved delete", Files: bk, Input: in("command", "delete", "path", "/memories/.cloudmem"), Want: fail(reserved("/memories/.cloudmem"))},
		Case{Name: "reserved str_replace", Files: bk, Input: in("command", "str_replace", "path", "/memories/.cloudmem/key", "old_str", "wrapped", "new_str", "x"),
			Want: fail(reserved("/memories/.cloudmem/key"))},
		Case{Name: "reserved insert", Files: bk, Input: in("command", "insert", "path", "/memories/.cloudmem/key", "insert_line", 0, "insert_text", "x"),
			Want: fail(reserved("/memories/.cloudmem/key"))},
		Case{Name: "reserved rename source", Files: bk, Input: in("command", "rename", "old_path", "/memories/.cloudmem/key", "new_path", "/memories/k"),
			Want: fail(reserved("/memories/.cloudmem/key"))},
		Case{Name: "reserved rename destination", Files: bk, Input: in("command", "rename", "old_path", "/memories/a.md", "new_path", "/memories/.cloudmem/a.md"),
			Want: fail(reserved("/memories/.cloudmem/a.md"))},
	)
}

// orderCases: paths that fail several checks report the first in the order
// prefix, escape, characters, length, reserved; rename checks old_path
// before new_path; every command validates every path.
func orderCases() []Case {
	long := strings.Repeat("x", 1100)
	rename := func(from, to string) string { return in("command", "rename", "old_path", from, "new_path", to) }
	return []Case{
		{Name: "order: prefix before escape", Input: viewPath("/etc/../memories/x"), Want: fail(badPrefix("/etc/../memories/x"))},
		{Name: "order: prefix before characters", Input: viewPath("memories/\x00"), Want: fail(badPrefix("memories/\x00"))},
		{Name: "order: prefix before length", Input: viewPath("/tmp/" + long), Want: fail(badPrefix("/tmp/" + long))},
		{Name: "order: prefix before reserved", Input: viewPath("memories/.cloudmem"), Want: fail(badPrefix("memories/.cloudmem"))},
		{Name: "order: escape before characters", Input: viewPath("/memories/../\x01"), Want: fail(escapes("/memories/../\x01"))},
		{Name: "order: backslash before characters", Input: viewPath("/memories/a\\\x00"), Want: fail(escapes("/memories/a\\\x00"))},
		{Name: "order: escape before length", Input: viewPath("/memories/%2e%2e/" + long), Want: fail(escapes("/memories/%2e%2e/" + long))},
		{Name: "order: escape before reserved", Input: viewPath("/memories/.cloudmem/.."), Want: fail(escapes("/memories/.cloudmem/.."))},
		{Name: "order: characters before length", Input: viewPath("/memories/\x01" + long), Want: fail(badChars("/memories/\x01" + long))},
		{Name: "order: characters before reserved", Input: viewPath("/memories/.cloudmem/\x7f"), Want: fail(badChars("/memories/.cloudmem/\x7f"))},
		{Name: "order: length before reserved", Input: viewPath("/memories/.cloudmem/" + long), Want: fail(tooLong("/memories/.cloudmem/" + long))},

		{Name: "order: old_path before new_path", Input: rename("/memoriesX", "/etc/y"), Want: fail(badPrefix("/memoriesX"))},
		{Name: "order: old_path characters before new_path prefix", Input: rename("/memories/a\x01", "/x"), Want: fail(badChars("/memories/a\x01"))},
		{Name: "order: new_path checked after a valid old_path", Files: files("/memories/a.md", "a"), Input: rename("/memories/a.md", "/x"), Want: fail(badPrefix("/x"))},
		{Name: "order: new_path escape", Files: files("/memories/a.md", "a"), Input: rename("/memories/a.md", "/memories/../a.md"), Want: fail(escapes("/memories/../a.md"))},
		{Name: "order: old_path validated even when new_path is the root", Input: rename("/memories/a/../b", "/memories"), Want: fail(escapes("/memories/a/../b"))},
		{Name: "create validates its path", Input: createPath("/etc/x"), Want: fail(badPrefix("/etc/x"))},
		{Name: "str_replace validates its path", Files: files("/memories/x", "abc"), Input: in("command", "str_replace", "path", "/memories/a/../x", "old_str", "a", "new_str", "b"),
			Want: fail(escapes("/memories/a/../x"))},
		{Name: "insert validates its path", Input: in("command", "insert", "path", "/memories/a\x00", "insert_line", 0, "insert_text", "x"), Want: fail(badChars("/memories/a\x00"))},
		{Name: "delete validates its path", Input: in("command", "delete", "path", "/memories/x/"+long), Want: fail(tooLong("/memories/x/" + long))},
		{Name: "view validates a path under a file", Files: files("/memories/a.md", "a"), Input: viewPath("/memories/a.md/%2e%2e"), Want: fail(escapes("/memories/a.md/%2e%2e"))},
	}
}

// keyBudgetCases: docs/spec.md "Paths": a path valid by the rules above
// whose key is longer than the store can hold (a prefixed store leaves
// fewer than 1,024 bytes) is too long, before any storage call and before
// the reserved check.
func keyBudgetCases() []Case {
	const budget = 400
	seg := strings.Repeat("s", 99)
	fits := "/memories/" + strings.Repeat(seg+"/", 3) + strings.Repeat("a", budget-300) // a key of exactly budget bytes
	over := fits + "x"
	wrap := budgeted(budget)
	return []Case{
		{Name: "key budget: a key that fits", Wrap: wrap, Input: createPath(fits), Want: ok(created(fits)), WantFiles: files(fits, "x")},
		{Name: "key budget: create one byte over", Wrap: wrap, Input: createPath(over), Want: fail(tooLong(over))},
		{Name: "key budget: view one byte over", Wrap: wrap, Input: viewPath(over), Want: fail(tooLong(over))},
		{Name: "key budget: delete one byte over", Wrap: wrap, Input: in("command", "delete", "path", over), Want: fail(tooLong(over))},
		{Name: "key budget: rename destination one byte over", Wrap: wrap, Files: files("/memories/a.md", "a"),
			Input: in("command", "rename", "old_path", "/memories/a.md", "new_path", over), Want: fail(tooLong(over))},
		{Name: "key budget: counted after normalisation", Wrap: wrap, Input: createPath("/memories//./" + fits[len("/memories/"):]),
			Want: ok(created("/memories//./" + fits[len("/memories/"):])), WantFiles: files(fits, "x")},
		{Name: "key budget: before reserved", Wrap: wrap, Input: viewPath(over + "/.cloudmem"), Want: fail(tooLong(over + "/.cloudmem"))},
	}
}
