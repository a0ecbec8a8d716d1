package memorytest

import (
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Read-only stores and storage failures: docs/spec.md "Concurrency, limits and
// failures".

func readOnlyRefusal(command string) string {
	return "The memory directory is read-only: " + command + " is not allowed"
}

// storageFailed is the whole text for a failed storage call. The contract
// leaves the short cause open; this project fixes it, so that no wording of
// a backend's error (hosts, keys, credentials) can reach the model.
const storageFailed = "The memory storage failed: the storage backend returned an error"

func readOnlyCases() []Case {
	start := files("/memories/a.md", "alpha\nbeta", "/memories/d/x.md", "x")
	writes := []struct{ command, input string }{
		{"create", in("command", "create", "path", "/memories/new.md", "file_text", "n")},
		{"create", in("command", "create", "path", "/etc/passwd", "file_text", "n")},
		{"str_replace", in("command", "str_replace", "path", "/memories/a.md", "old_str", "alpha", "new_str", "A")},
		{"str_replace", in("command", "str_replace", "path", "/memories/../a.md", "old_str", "alpha")},
		{"insert", in("command", "insert", "path", "/memories/a.md", "insert_line", 0, "insert_text", "top")},
		{"insert", in("command", "insert", "path", "/memories/.cloudmem/k", "insert_line", 0, "insert_text", "top")},
		{"delete", in("command", "delete", "path", "/memories/a.md")},
		{"delete", in("command", "delete", "path", "/memories/")},
		{"delete", in("command", "delete", "path", "/memories/a\x00")},
		{"rename", in("command", "rename", "old_path", "/memories/d", "new_path", "/memories/e")},
		{"rename", in("command", "rename", "old_path", "/memoriesX", "new_path", "/etc")},
	}
	modes := []struct {
		name string
		opts memory.Options
		wrap func(blob.Store) blob.Store
	}{
		{"Options.ReadOnly", memory.Options{ReadOnly: true}, nil},
		{"blob.ReadOnly", memory.Options{}, blob.ReadOnly},
	}
	var c []Case
	for _, m := range modes {
		for i, w := range writes {
			c = append(c, Case{Name: m.name + " refuses " + w.command + " " + string(rune('a'+i)),
				Files: start, Options: m.opts, Wrap: m.wrap, Input: w.input, Want: fail(readOnlyRefusal(w.command))})
		}
		c = append(c,
			// Decoding comes first.
			Case{Name: m.name + " reports a missing field first", Files: start, Options: m.opts, Wrap: m.wrap,
				Input: `{"command":"create","path":"/memories/n.md"}`, Want: fail(requiredFor("file_text", "create"))},
			Case{Name: m.name + " reports a mistyped field first", Files: start, Options: m.opts, Wrap: m.wrap,
				Input: `{"command":"insert","path":"/memories/a.md","insert_line":1.0,"insert_text":"x"}`, Want: fail(notInteger)},
			Case{Name: m.name + " reports an unknown command", Files: start, Options: m.opts, Wrap: m.wrap,
				Input: `{"command":"write","path":"/memories/a.md"}`, Want: fail("Unknown memory command: write" + unknownCommand)},
			// Reading works.
			Case{Name: m.name + " views a directory", Files: start, Options: m.opts, Wrap: m.wrap,
				Input: viewPath("/memories"), Want: ok(listing("/memories", "11B\t/memories", "10B\t/memories/a.md", "1B\t/memories/d/", "1B\t/memories/d/x.md"))},
			Case{Name: m.name + " views a file", Files: start, Options: m.opts, Wrap: m.wrap,
				Input: viewPath("/memories/a.md"), Want: ok(fileView("/memories/a.md", 1, "alpha", "beta"))},
			Case{Name: m.name + " validates view paths", Files: start, Options: m.opts, Wrap: m.wrap,
				Input: viewPath("/memories/../a.md"), Want: fail(escapes("/memories/../a.md"))},
		)
	}
	return c
}

func failureCases() []Case {
	start := files("/memories/a.md", "alpha\nbeta", "/memories/d/x.md", "x", "/memories/d/y.md", "y")
	create := in("command", "create", "path", "/memories/new.md", "file_text", "n")
	replace := in("command", "str_replace", "path", "/memories/a.md", "old_str", "alpha", "new_str", "A")
	insert := in("command", "insert", "path", "/memories/a.md", "insert_line", 1, "insert_text", "mid")
	cases := []struct {
		name  string
		ops   op
		input string
	}{
		{"view a directory", opAll, viewPath("/memories")},
		{"view a file", opAll, viewPath("/memories/a.md")},
		{"view a missing path", opAll, viewPath("/memories/nope")},
		{"create", opAll, create},
		{"str_replace", opAll, replace},
		{"insert", opAll, insert},
		{"delete a file", opAll, in("command", "delete", "path", "/memories/a.md")},
		{"delete a directory", opAll, in("command", "delete", "path", "/memories/d")},
		{"rename a file", opAll, in("command", "rename", "old_path", "/memories/a.md", "new_path", "/memories/b.md")},
		{"rename a directory", opAll, in("command", "rename", "old_path", "/memories/d", "new_path", "/memories/e")},
		{"view a directory, List fails", opList, viewPath("/memories/d")},
		{"view a file, Get fails", opGet, viewPath("/memories/a.md")},
		{"create, Put fails", opPut, create},
		{"create, List fails", opList, create},
		{"str_replace, Put fails", opPut, replace},
		{"insert, Put fails", opPut, insert},
		{"delete a file, Delete fails", opDelete, in("command", "delete", "path", "/memories/a.md")},
		{"delete a directory, Delete fails", opDelete, in("command", "delete", "path", "/memories/d")},
		{"rename a file, Put fails", opPut, in("command", "rename", "old_path", "/memories/a.md", "new_path", "/memories/b.md")},
		{"rename a directory, Put fails", opPut, in("command", "rename", "old_path", "/memories/d", "new_path", "/memories/e")},
	}
	var c []Case
	for _, k := range cases {
		// The exact comparison also proves that none of secretCause's
		// text reaches the model.
		c = append(c, Case{Name: k.name, Files: start, Wrap: failing(k.ops), Input: k.input, Want: fail(storageFailed)})
	}
	// A rival writer wins every compare-and-swap: after its retries the
	// handler gives up and changes nothing.
	lost := func(path string) memory.Result { return memory.Result{Text: conflict(path), IsError: true} }
	return append(c,
		Case{Name: "str_replace loses every race", Files: start, Wrap: rival, Input: replace, Want: lost("/memories/a.md")},
		Case{Name: "insert loses every race", Files: start, Wrap: rival, Input: insert, Want: lost("/memories/a.md")},
		Case{Name: "lost race names the path as sent", Files: start, Wrap: rival, Input: in("command", "insert", "path", "/memories//a.md", "insert_line", 0, "insert_text", "x"),
			Want: lost("/memories//a.md")},
		Case{Name: "lost race without retries", Options: memory.Options{Retries: -1}, Files: start, Wrap: rival, Input: replace, Want: lost("/memories/a.md")},
		Case{Name: "lost race with one retry", Options: memory.Options{Retries: 1}, Files: start, Wrap: rival, Input: insert, Want: lost("/memories/a.md")},
	)
}
