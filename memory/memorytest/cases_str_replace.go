package memorytest

import (
	"strconv"
	"strings"

	"github.com/cloudmem/cloudmem/memory"
)

// str_replace: docs/spec.md "str_replace". Checks in this order: exists, is a
// file, UTF-8, empty old_str, matches, size.

func strReplaced(snippet string) string {
	return "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" + snippet
}

func noMatch(old, path string) string {
	return "No replacement was performed, old_str `" + old + "` did not appear verbatim in " + path + "."
}

func multiple(old, lines string) string {
	return "No replacement was performed. Multiple occurrences of old_str `" + old + "` in lines: " + lines + ". Please ensure it is unique"
}

// lines is n lines each holding text, joined by "\n".
func lines(text string, n int) string { return strings.TrimSuffix(strings.Repeat(text+"\n", n), "\n") }

// upTo is "1, 2, ..., n".
func upTo(n int) string {
	nums := make([]string, n)
	for i := range nums {
		nums[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(nums, ", ")
}

const emptyOldStr = "No replacement was performed, old_str must not be empty."

func replaceInput(path, old, new string) string {
	return in("command", "str_replace", "path", path, "old_str", old, "new_str", new)
}

func strReplaceCases() []Case {
	const eight = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8"
	start := files("/memories/f.md", eight, "/memories/d/x.md", "x", "/memories/bin", "a\xffb", "/memories/nl.md", "a\nb\n")
	after := func(content string) map[string]string { return merged(start, files("/memories/f.md", content)) }
	return []Case{
		// The snippet: lines of the new content from 2 before the match's
		// first line through 2 after the last line of the inserted text.
		{Name: "one line in the middle", Files: start, Input: replaceInput("/memories/f.md", "l5", "X"),
			Want:      ok("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     3\tl3\n     4\tl4\n     5\tX\n     6\tl6\n     7\tl7"),
			WantFiles: after("l1\nl2\nl3\nl4\nX\nl6\nl7\nl8")},
		{Name: "at the start of the file", Files: start, Input: replaceInput("/memories/f.md", "l1", "X"),
			Want: ok(strReplaced(numbered(1, "X", "l2", "l3"))), WantFiles: after("X\nl2\nl3\nl4\nl5\nl6\nl7\nl8")},
		{Name: "on line 2", Files: start, Input: replaceInput("/memories/f.md", "l2", "X"),
			Want: ok(strReplaced(numbered(1, "l1", "X", "l3", "l4"))), WantFiles: after("l1\nX\nl3\nl4\nl5\nl6\nl7\nl8")},
		{Name: "at the end of the file", Files: start, Input: replaceInput("/memories/f.md", "l8", "X"),
			Want: ok(strReplaced(numbered(6, "l6", "l7", "X"))), WantFiles: after("l1\nl2\nl3\nl4\nl5\nl6\nl7\nX")},
		{Name: "multi-line replacement is shown whole", Files: start, Input: replaceInput("/memories/f.md", "l4", "A\nB\nC\nD"),
			Want:      ok(strReplaced(numbered(2, "l2", "l3", "A", "B", "C", "D", "l5", "l6"))),
			WantFiles: after("l1\nl2\nl3\nA\nB\nC\nD\nl5\nl6\nl7\nl8")},
		{Name: "multi-line old_str", Files: start, Input: replaceInput("/memories/f.md", "l3\nl4\nl5", "Z"),
			Want: ok(strReplaced(numbered(1, "l1", "l2", "Z", "l6", "l7"))), WantFiles: after("l1\nl2\nZ\nl6\nl7\nl8")},
		{Name: "old_str starting with a newline", Files: start, Input: replaceInput("/memories/f.md", "\nl6", " six"),
			Want: ok(strReplaced(numbered(3, "l3", "l4", "l5 six", "l7", "l8"))), WantFiles: after("l1\nl2\nl3\nl4\nl5 six\nl7\nl8")},
		{Name: "inside a line", Files: files("/memories/g.md", "hello world\nbye"), Input: replaceInput("/memories/g.md", "world", "there"),
			Want: ok(strReplaced(numbered(1, "hello there", "bye"))), WantFiles: files("/memories/g.md", "hello there\nbye")},
		{Name: "snippet shows a final empty line", Files: start, Input: replaceInput("/memories/nl.md", "b", "c"),
			Want: ok(strReplaced(numbered(1, "a", "c", ""))), WantFiles: merged(start, files("/memories/nl.md", "a\nc\n"))},
		{Name: "path named as sent", Files: start, Input: replaceInput("/memories//d/./x.md", "x", "y"),
			Want: ok(strReplaced(numbered(1, "y"))), WantFiles: merged(start, files("/memories/d/x.md", "y"))},

		// Missing new_str, or null, deletes the match.
		{Name: "missing new_str deletes", Files: start, Input: in("command", "str_replace", "path", "/memories/f.md", "old_str", "l4\n"),
			Want: ok(strReplaced(numbered(2, "l2", "l3", "l5", "l6", "l7"))), WantFiles: after("l1\nl2\nl3\nl5\nl6\nl7\nl8")},
		{Name: "null new_str deletes", Files: start, Input: `{"command":"str_replace","path":"/memories/f.md","old_str":"l4","new_str":null}`,
			Want: ok(strReplaced(numbered(2, "l2", "l3", "", "l5", "l6"))), WantFiles: after("l1\nl2\nl3\n\nl5\nl6\nl7\nl8")},
		{Name: "empty new_str deletes", Files: start, Input: replaceInput("/memories/f.md", "l8", ""),
			Want: ok(strReplaced(numbered(6, "l6", "l7", ""))), WantFiles: after("l1\nl2\nl3\nl4\nl5\nl6\nl7\n")},

		// The replacement is literal.
		{Name: "dollar signs are literal", Files: files("/memories/p.md", "price: N"), Input: replaceInput("/memories/p.md", "N", "$& $1 $$ ${1} $0"),
			Want: ok(strReplaced(numbered(1, "price: $& $1 $$ ${1} $0"))), WantFiles: files("/memories/p.md", "price: $& $1 $$ ${1} $0")},
		{Name: "regexp characters in old_str are literal", Files: files("/memories/p.md", "a.c abc (x)*"), Input: replaceInput("/memories/p.md", "(x)*", "y"),
			Want: ok(strReplaced(numbered(1, "a.c abc y"))), WantFiles: files("/memories/p.md", "a.c abc y")},
		{Name: "overlapping occurrences count once", Files: files("/memories/p.md", "aaa"), Input: replaceInput("/memories/p.md", "aa", "X"),
			Want: ok(strReplaced(numbered(1, "Xa"))), WantFiles: files("/memories/p.md", "Xa")},

		// Errors, in the order of the checks.
		{Name: "missing file", Files: start, Input: replaceInput("/memories/nope.md", "a", "b"), Want: fail(notExist("/memories/nope.md"))},
		{Name: "missing file under a file", Files: start, Input: replaceInput("/memories/f.md/x", "a", "b"), Want: fail(notExist("/memories/f.md/x"))},
		{Name: "a directory", Files: start, Input: replaceInput("/memories/d", "x", "y"), Want: fail("The path /memories/d is not a file.")},
		{Name: "a directory named as sent", Files: start, Input: replaceInput("/memories/d/", "x", "y"), Want: fail("The path /memories/d/ is not a file.")},
		{Name: "the root", Files: start, Input: replaceInput("/memories", "x", "y"), Want: fail("The path /memories is not a file.")},
		{Name: "not UTF-8", Files: start, Input: replaceInput("/memories/bin", "a", "c"), Want: fail(notUTF8("/memories/bin"))},
		{Name: "empty old_str", Files: start, Input: replaceInput("/memories/f.md", "", "x"), Want: fail(emptyOldStr)},
		{Name: "no match", Files: start, Input: replaceInput("/memories/f.md", "l9", "x"), Want: fail(noMatch("l9", "/memories/f.md"))},
		{Name: "no match is case-sensitive", Files: start, Input: replaceInput("/memories/f.md", "L1", "x"), Want: fail(noMatch("L1", "/memories/f.md"))},
		{Name: "no match names the path as sent", Files: start, Input: replaceInput("/memories/./f.md", "zz", "x"), Want: fail(noMatch("zz", "/memories/./f.md"))},
		{Name: "no match with a multi-line old_str", Files: start, Input: replaceInput("/memories/f.md", "l1\nl3", "x"), Want: fail(noMatch("l1\nl3", "/memories/f.md"))},
		{Name: "no match in an empty file", Files: files("/memories/e", ""), Input: replaceInput("/memories/e", "a", "b"), Want: fail(noMatch("a", "/memories/e"))},
		{Name: "multiple matches on distinct lines", Files: files("/memories/m.md", "foo foo\nbar\nfoo"), Input: replaceInput("/memories/m.md", "foo", "x"),
			Want: fail("No replacement was performed. Multiple occurrences of old_str `foo` in lines: 1, 3. Please ensure it is unique")},
		{Name: "multiple matches on one line", Files: files("/memories/m.md", "x\nab ab ab\n"), Input: replaceInput("/memories/m.md", "ab", "x"), Want: fail(multiple("ab", "2"))},
		{Name: "multiple matches, many lines", Files: files("/memories/m.md", "k\nk\nz\nk\nk\nk\nk\nk\nk\nk\nk\nk"), Input: replaceInput("/memories/m.md", "k", "x"),
			Want: fail(multiple("k", "1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12"))},
		{Name: "multiple multi-line matches", Files: files("/memories/m.md", "a\nb\na\nb"), Input: replaceInput("/memories/m.md", "a\nb", "x"), Want: fail(multiple("a\nb", "1, 3"))},
		{Name: "multiple matches starting at a newline", Files: files("/memories/m.md", "a\nb\na\nb"), Input: replaceInput("/memories/m.md", "\nb", "x"), Want: fail(multiple("\nb", "1, 3"))},
		{Name: "non-overlapping count", Files: files("/memories/m.md", "aaaa"), Input: replaceInput("/memories/m.md", "aa", "x"), Want: fail(multiple("aa", "1"))},

		// docs/spec.md "str_replace": past 100 line numbers, the first 100
		// and ", … ({k} in all)"; an echoed old_str is cut at the view limit
		// (code points) and followed by "…".
		{Name: "multiple matches on 100 lines, all listed", Files: files("/memories/m.md", lines("k", 100)), Input: replaceInput("/memories/m.md", "k", "x"),
			Want: fail(multiple("k", upTo(100)))},
		{Name: "multiple matches on 101 lines, 100 listed", Files: files("/memories/m.md", lines("k", 101)), Input: replaceInput("/memories/m.md", "k", "x"),
			Want: fail(multiple("k", upTo(100)+", … (101 in all)"))},
		{Name: "multiple matches on 250 lines, 100 listed", Files: files("/memories/m.md", lines("k", 250)), Input: replaceInput("/memories/m.md", "k", "x"),
			Want: fail(multiple("k", upTo(100)+", … (250 in all)"))},
		{Name: "echoed old_str at the view limit", Options: memory.Options{ViewLimit: 5}, Files: start, Input: replaceInput("/memories/f.md", "\u00e9bcde", "x"),
			Want: fail(noMatch("\u00e9bcde", "/memories/f.md"))},
		{Name: "echoed old_str over the view limit", Options: memory.Options{ViewLimit: 5}, Files: start, Input: replaceInput("/memories/f.md", "\u00e9bcdef", "x"),
			Want: fail(noMatch("\u00e9bcde…", "/memories/f.md"))},
		{Name: "echoed old_str over the view limit, multiple", Options: memory.Options{ViewLimit: 2}, Files: files("/memories/m.md", "abc\nabc"), Input: replaceInput("/memories/m.md", "abc", "x"),
			Want: fail(multiple("ab…", "1, 2"))},
		{Name: "echoed old_str whole with no view limit", Options: memory.Options{ViewLimit: -1}, Files: start, Input: replaceInput("/memories/f.md", strings.Repeat("z", 20000), "x"),
			Want: fail(noMatch(strings.Repeat("z", 20000), "/memories/f.md"))},
		{Name: "echoed old_str cut at the default view limit", Files: start, Input: replaceInput("/memories/f.md", strings.Repeat("z", 16001), "x"),
			Want: fail(noMatch(strings.Repeat("z", 16000)+"…", "/memories/f.md"))},

		{Name: "order: missing before empty old_str", Files: start, Input: replaceInput("/memories/nope", "", "x"), Want: fail(notExist("/memories/nope"))},
		{Name: "order: directory before empty old_str", Files: start, Input: replaceInput("/memories/d", "", "x"), Want: fail("The path /memories/d is not a file.")},
		{Name: "order: UTF-8 before empty old_str", Files: start, Input: replaceInput("/memories/bin", "", "x"), Want: fail(notUTF8("/memories/bin"))},
		{Name: "order: empty old_str before size", Options: memory.Options{MaxFileBytes: 1}, Files: start, Input: replaceInput("/memories/f.md", "", "x"), Want: fail(emptyOldStr)},
		{Name: "order: no match before size", Options: memory.Options{MaxFileBytes: 1}, Files: start, Input: replaceInput("/memories/f.md", "zz", "x"), Want: fail(noMatch("zz", "/memories/f.md"))},
		{Name: "order: multiple before size", Options: memory.Options{MaxFileBytes: 1}, Files: files("/memories/m.md", "aa"), Input: replaceInput("/memories/m.md", "a", "xx"), Want: fail(multiple("a", "1"))},

		// Size, on the new content.
		{Name: "size at the limit", Options: memory.Options{MaxFileBytes: 10}, Files: files("/memories/s", "0123456789"), Input: replaceInput("/memories/s", "0", "a"),
			Want: ok(strReplaced(numbered(1, "a123456789"))), WantFiles: files("/memories/s", "a123456789")},
		{Name: "size one over the limit", Options: memory.Options{MaxFileBytes: 10}, Files: files("/memories/s", "0123456789"), Input: replaceInput("/memories/s", "0", "ab"),
			Want: fail(tooBig("/memories/s", 11, 10))},
		{Name: "size of a shrinking edit over the limit", Options: memory.Options{MaxFileBytes: 10}, Files: files("/memories/s", "0123456789ABCDEFGHIJ"), Input: replaceInput("/memories/s", "ABCDE", ""),
			Want: fail(tooBig("/memories/s", 15, 10))},
		{Name: "size names the path as sent", Options: memory.Options{MaxFileBytes: 3}, Files: files("/memories/s", "abc"), Input: replaceInput("/memories//s", "a", "\u00e9"),
			Want: fail(tooBig("/memories//s", 4, 3))},
	}
}
