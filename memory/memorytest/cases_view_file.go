package memorytest

import "fmt"

// view of a file: docs/spec.md "view", "File".

func badRange(a, b int64, path string, n int) string {
	return fmt.Sprintf("Invalid `view_range` parameter: [%d, %d]. The file %s has %d lines", a, b, path, n)
}

func notUTF8(path string) string { return "The file " + path + " is not a UTF-8 text file" }

// textFiles holds the files the view cases read.
var textFiles = files(
	"/memories/f.md", "l1\nl2\nl3\nl4\nl5",
	"/memories/nl.md", "a\nb\n",
	"/memories/empty.md", "",
	"/memories/newline.md", "\n",
	"/memories/crlf.md", "a\r\nb\r\n",
	"/memories/tabs.md", "\tindented\t\n  spaced  ",
	"/memories/twelve.md", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12",
	"/memories/.hidden", "secret",
	"/memories/bin", "\xff\xfe\x00\x01",
	"/memories/half.md", "ok\ncaf\xc3",
	"/memories/d/x.md", "x",
)

func viewFileCases() []Case {
	view := func(path, r string) string { return `{"command":"view","path":"` + path + `","view_range":` + r + `}` }
	c := []Case{
		{Name: "whole file, exact bytes", Input: viewPath("/memories/f.md"),
			Want: ok("Here's the content of /memories/f.md with line numbers:\n     1\tl1\n     2\tl2\n     3\tl3\n     4\tl4\n     5\tl5")},
		{Name: "final newline shows an empty last line", Input: viewPath("/memories/nl.md"),
			Want: ok("Here's the content of /memories/nl.md with line numbers:\n     1\ta\n     2\tb\n     3\t")},
		{Name: "empty file", Input: viewPath("/memories/empty.md"), Want: ok("Here's the content of /memories/empty.md with line numbers:\n     1\t")},
		{Name: "a lone newline is two empty lines", Input: viewPath("/memories/newline.md"), Want: ok(fileView("/memories/newline.md", 1, "", ""))},
		{Name: "carriage returns are kept", Input: viewPath("/memories/crlf.md"), Want: ok(fileView("/memories/crlf.md", 1, "a\r", "b\r", ""))},
		{Name: "tabs and spaces are kept", Input: viewPath("/memories/tabs.md"), Want: ok(fileView("/memories/tabs.md", 1, "\tindented\t", "  spaced  "))},
		{Name: "numbers right-aligned in six columns", Input: viewPath("/memories/twelve.md"),
			Want: ok("Here's the content of /memories/twelve.md with line numbers:\n" +
				"     1\t1\n     2\t2\n     3\t3\n     4\t4\n     5\t5\n     6\t6\n     7\t7\n     8\t8\n     9\t9\n    10\t10\n    11\t11\n    12\t12")},
		{Name: "hidden file", Input: viewPath("/memories/.hidden"), Want: ok(fileView("/memories/.hidden", 1, "secret"))},
		{Name: "file in a directory", Input: viewPath("/memories/d/x.md"), Want: ok(fileView("/memories/d/x.md", 1, "x"))},
		{Name: "header names the path as sent: repeated slash", Input: viewPath("/memories//f.md"), Want: ok(fileView("/memories//f.md", 1, "l1", "l2", "l3", "l4", "l5"))},
		{Name: "header names the path as sent: dot segment", Input: viewPath("/memories/./d/x.md"), Want: ok(fileView("/memories/./d/x.md", 1, "x"))},
		{Name: "header names the path as sent: trailing slash", Input: viewPath("/memories/d/x.md/"), Want: ok(fileView("/memories/d/x.md/", 1, "x"))},
		{Name: "missing file", Input: viewPath("/memories/nope.md"), Want: fail(notExist("/memories/nope.md"))},
		{Name: "missing file named as sent", Input: viewPath("/memories//nope.md/"), Want: fail(notExist("/memories//nope.md/"))},
		{Name: "not UTF-8", Input: viewPath("/memories/bin"), Want: fail(notUTF8("/memories/bin"))},
		{Name: "not UTF-8 at the end", Input: viewPath("/memories/half.md"), Want: fail(notUTF8("/memories/half.md"))},
		{Name: "not UTF-8 named as sent", Input: viewPath("/memories/./bin"), Want: fail(notUTF8("/memories/./bin"))},

		// view_range: [a, b] shows lines max(a,1) through b; -1 and b past
		// the end mean the end; numbering keeps the file's own numbers.
		{Name: "view_range [1,2]", Input: view("/memories/f.md", "[1,2]"), Want: ok(fileView("/memories/f.md", 1, "l1", "l2"))},
		{Name: "view_range [2,-1]", Input: view("/memories/f.md", "[2,-1]"), Want: ok(fileView("/memories/f.md", 2, "l2", "l3", "l4", "l5"))},
		{Name: "view_range [0,1] starts at 1", Input: view("/memories/f.md", "[0,1]"), Want: ok(fileView("/memories/f.md", 1, "l1"))},
		{Name: "view_range [-5,2] starts at 1", Input: view("/memories/f.md", "[-5,2]"), Want: ok(fileView("/memories/f.md", 1, "l1", "l2"))},
		{Name: "view_range [-1,-1] is the whole file", Input: view("/memories/f.md", "[-1,-1]"), Want: ok(fileView("/memories/f.md", 1, "l1", "l2", "l3", "l4", "l5"))},
		{Name: "view_range [4,100] stops at the end", Input: view("/memories/f.md", "[4,100]"), Want: ok(fileView("/memories/f.md", 4, "l4", "l5"))},
		{Name: "view_range [5,5] the last line", Input: view("/memories/f.md", "[5,5]"), Want: ok(fileView("/memories/f.md", 5, "l5"))},
		{Name: "view_range [3,3]", Input: view("/memories/f.md", "[3,3]"), Want: ok(fileView("/memories/f.md", 3, "l3"))},
		{Name: "view_range the empty last line", Input: view("/memories/nl.md", "[3,3]"), Want: ok("Here's the content of /memories/nl.md with line numbers:\n     3\t")},
		{Name: "view_range [2,-1] with a final newline", Input: view("/memories/nl.md", "[2,-1]"), Want: ok(fileView("/memories/nl.md", 2, "b", ""))},
		{Name: "view_range on an empty file", Input: view("/memories/empty.md", "[1,1]"), Want: ok(fileView("/memories/empty.md", 1, ""))},
		{Name: "view_range [10,12]", Input: view("/memories/twelve.md", "[10,12]"), Want: ok("Here's the content of /memories/twelve.md with line numbers:\n    10\t10\n    11\t11\n    12\t12")},
		{Name: "view_range with one element is ignored", Input: view("/memories/f.md", "[3]"), Want: ok(fileView("/memories/f.md", 1, "l1", "l2", "l3", "l4", "l5"))},
		{Name: "view_range with three elements is ignored", Input: view("/memories/f.md", "[2,3,4]"), Want: ok(fileView("/memories/f.md", 1, "l1", "l2", "l3", "l4", "l5"))},
		{Name: "view_range empty is ignored", Input: view("/memories/f.md", "[]"), Want: ok(fileView("/memories/f.md", 1, "l1", "l2", "l3", "l4", "l5"))},
		{Name: "view_range with three elements ignored, even invalid ones", Input: view("/memories/f.md", "[9,1,0]"), Want: ok(fileView("/memories/f.md", 1, "l1", "l2", "l3", "l4", "l5"))},

		// Ranges that select no line.
		{Name: "view_range start past the end", Input: view("/memories/f.md", "[6,-1]"), Want: fail(badRange(6, -1, "/memories/f.md", 5))},
		{Name: "view_range start and end past the end", Input: view("/memories/f.md", "[6,10]"), Want: fail(badRange(6, 10, "/memories/f.md", 5))},
		{Name: "view_range end below start", Input: view("/memories/f.md", "[3,2]"), Want: fail(badRange(3, 2, "/memories/f.md", 5))},
		{Name: "view_range end below -1", Input: view("/memories/f.md", "[1,-2]"), Want: fail(badRange(1, -2, "/memories/f.md", 5))},
		{Name: "view_range [0,0]", Input: view("/memories/f.md", "[0,0]"), Want: fail(badRange(0, 0, "/memories/f.md", 5))},
		{Name: "view_range end 0 below a negative start", Input: view("/memories/f.md", "[-3,0]"), Want: fail(badRange(-3, 0, "/memories/f.md", 5))},
		{Name: "view_range counts the empty last line", Input: view("/memories/nl.md", "[4,-1]"), Want: fail(badRange(4, -1, "/memories/nl.md", 3))},
		{Name: "view_range past an empty file", Input: view("/memories/empty.md", "[2,2]"), Want: fail(badRange(2, 2, "/memories/empty.md", 1))},
		{Name: "view_range error names the path as sent", Input: view("/memories//f.md", "[9,9]"), Want: fail(badRange(9, 9, "/memories//f.md", 5))},
		{Name: "view_range error with huge numbers", Input: view("/memories/f.md", "[9223372036854775807,-9223372036854775808]"),
			Want: fail(badRange(9223372036854775807, -9223372036854775808, "/memories/f.md", 5))},
	}
	for i := range c {
		c[i].Files = textFiles
	}
	return c
}
