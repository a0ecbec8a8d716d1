package memorytest

import (
	"fmt"

	"github.com/cloudmem/cloudmem/memory"
)

// insert: docs/spec.md "insert". Checks in this order: exists, is a file, UTF-8,
// range, size. n counts lines with a final "\n" ending the last line.

func insertInput(path string, line int64, text string) string {
	return in("command", "insert", "path", path, "insert_line", line, "insert_text", text)
}

func badInsertLine(line int64, n int) string {
	return fmt.Sprintf("Invalid `insert_line` parameter: %d. It should be within the range of lines of the file: [0, %d]", line, n)
}

func edited(path string) string { return "The file " + path + " has been edited." }

func insertCases() []Case {
	// One case per file and insertion: the four examples of the contract
	// first.
	type edit struct {
		name, before string
		line         int64
		text, after  string
	}
	edits := []edit{
		{"contract example: after the last line, final newline", "a\nb\n", 2, "X", "a\nb\nX\n"},
		{"contract example: after the last line, no final newline", "a\nb", 2, "X", "a\nb\nX"},
		{"contract example: empty file, text ending in a newline", "", 0, "X\n", "X\n"},
		{"contract example: at the top", "a\nb\n", 0, "X", "X\na\nb\n"},
		{"empty file gains a newline", "", 0, "X", "X\n"},
		{"at the top, no final newline", "a\nb", 0, "X", "X\na\nb"},
		{"between lines", "a\nb\n", 1, "X", "a\nX\nb\n"},
		{"between lines, no final newline", "a\nb", 1, "X", "a\nX\nb"},
		{"several lines", "a\nb\n", 1, "X\nY\n", "a\nX\nY\nb\n"},
		{"only one trailing newline is dropped", "a\nb\n", 2, "X\n\n", "a\nb\nX\n\n"},
		{"carriage returns are kept", "a\r\nb\r\n", 1, "X\r\n", "a\r\nX\r\nb\r\n"},
		{"a file that is one newline has one line", "\n", 1, "X", "\nX\n"},
		{"a file that is one newline, at the top", "\n", 0, "X", "X\n\n"},
	}
	var c []Case
	for _, e := range edits {
		c = append(c, Case{Name: e.name, Files: files("/memories/f.md", e.before), Input: insertInput("/memories/f.md", e.line, e.text),
			Want: ok(edited("/memories/f.md")), WantFiles: files("/memories/f.md", e.after)})
	}
	start := files("/memories/f.md", "a\nb\n", "/memories/g.md", "a\nb", "/memories/e.md", "", "/memories/d/x.md", "x", "/memories/bin", "\xc3(")
	return append(c,
		Case{Name: "path named as sent", Files: start, Input: insertInput("/memories//d/./x.md", 1, "y"), Want: ok(edited("/memories//d/./x.md")),
			WantFiles: merged(start, files("/memories/d/x.md", "x\ny"))},

		// The range is [0, n].
		Case{Name: "range: -1", Files: start, Input: insertInput("/memories/f.md", -1, "X"), Want: fail(badInsertLine(-1, 2))},
		Case{Name: "range: n+1 with a final newline", Files: start, Input: insertInput("/memories/f.md", 3, "X"), Want: fail(badInsertLine(3, 2))},
		Case{Name: "range: n+1 without a final newline", Files: start, Input: insertInput("/memories/g.md", 3, "X"), Want: fail(badInsertLine(3, 2))},
		Case{Name: "range: empty file", Files: start, Input: insertInput("/memories/e.md", 1, "X"), Want: fail(badInsertLine(1, 0))},
		Case{Name: "range: far past the end", Files: start, Input: insertInput("/memories/f.md", 1000, "X"), Want: fail(badInsertLine(1000, 2))},
		Case{Name: "insert_line not an integer", Files: start, Input: `{"command":"insert","path":"/memories/f.md","insert_line":2.0,"insert_text":"X"}`, Want: fail(notInteger)},

		// Errors, in the order of the checks.
		Case{Name: "missing file", Files: start, Input: insertInput("/memories/nope.md", 0, "X"), Want: fail("The path /memories/nope.md does not exist")},
		Case{Name: "missing file named as sent", Files: start, Input: insertInput("/memories/./nope.md", 0, "X"), Want: fail("The path /memories/./nope.md does not exist")},
		Case{Name: "a directory", Files: start, Input: insertInput("/memories/d", 0, "X"), Want: fail("The path /memories/d is not a file.")},
		Case{Name: "the root", Files: start, Input: insertInput("/memories/", 0, "X"), Want: fail("The path /memories/ is not a file.")},
		Case{Name: "not UTF-8", Files: start, Input: insertInput("/memories/bin", 0, "X"), Want: fail(notUTF8("/memories/bin"))},
		Case{Name: "order: missing before range", Files: start, Input: insertInput("/memories/nope.md", -1, "X"), Want: fail("The path /memories/nope.md does not exist")},
		Case{Name: "order: directory before range", Files: start, Input: insertInput("/memories/d", 5, "X"), Want: fail("The path /memories/d is not a file.")},
		Case{Name: "order: UTF-8 before range", Files: start, Input: insertInput("/memories/bin", 5, "X"), Want: fail(notUTF8("/memories/bin"))},
		Case{Name: "order: range before size", Options: memory.Options{MaxFileBytes: 1}, Files: start, Input: insertInput("/memories/f.md", 9, "long"), Want: fail(badInsertLine(9, 2))},

		// Size, on the new content.
		Case{Name: "size at the limit", Options: memory.Options{MaxFileBytes: 6}, Files: start, Input: insertInput("/memories/f.md", 2, "X"), Want: ok(edited("/memories/f.md")),
			WantFiles: merged(start, files("/memories/f.md", "a\nb\nX\n"))},
		Case{Name: "size one over the limit", Options: memory.Options{MaxFileBytes: 5}, Files: start, Input: insertInput("/memories/f.md", 2, "X"), Want: fail(tooBig("/memories/f.md", 6, 5))},
		Case{Name: "size counts the newline an empty file gains", Options: memory.Options{MaxFileBytes: 1}, Files: start, Input: insertInput("/memories/e.md", 0, "X"),
			Want: fail(tooBig("/memories/e.md", 2, 1))},
	)
}
