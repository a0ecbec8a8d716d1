package memorytest

// Decoding: docs/spec.md "Wire form". None of these may touch storage (Run checks
// that for every decoding error).

import (
	"strings"

	"github.com/cloudmem/cloudmem/memory"
)

const unknownCommand = ". Expected one of: view, create, str_replace, insert, delete, rename"

// emptyRoot is the view of /memories on an empty store.
var emptyRoot = listing("/memories", "0B\t/memories")

func invalidInput(name, input string) Case {
	return Case{Name: name, Input: input, Want: fail("Invalid memory command input: "), WantPrefix: true}
}

func decodeCases() []Case {
	return append(append(malformedCases(), commandCases()...), fieldCases()...)
}

func malformedCases() []Case {
	return []Case{
		invalidInput("array", `[]`),
		invalidInput("array holding an object", `[{"command":"view","path":"/memories"}]`),
		invalidInput("string", `"view"`),
		invalidInput("number", `42`),
		invalidInput("json null", `null`),
		invalidInput("truncated object", `{"command":"view","path":"/memories"`),
		invalidInput("two objects", `{"command":"view","path":"/memories"} {}`),
		invalidInput("single quotes", `{'command':'view','path':'/memories'}`),
		invalidInput("leading zero", `{"command":"view","path":"/memories/a.md","view_range":[01,2]}`),
		invalidInput("empty input", ``),
		invalidInput("blank line", "\n"),
		invalidInput("whitespace only", " \t\r\n"),
		invalidInput("not UTF-8 in a path", "{\"command\":\"view\",\"path\":\"/memories/\xff\"}"),
		invalidInput("not UTF-8 in file_text", "{\"command\":\"create\",\"path\":\"/memories/a.md\",\"file_text\":\"caf\xc3\"}"),
		// The rule is about the input as a whole, so it holds in fields
		// the command ignores too.
		invalidInput("not UTF-8 in an unknown field", "{\"command\":\"view\",\"path\":\"/memories\",\"note\":\"\xc3\x28\"}"),
		invalidInput("not UTF-8 in a key", "{\"command\":\"view\",\"path\":\"/memories\",\"\xfe\":1}"),
		invalidInput("unpaired \\ud800 at the end", `{"command":"view","path":"/memories/\ud800"}`),
		invalidInput("unpaired \\ud800 before a letter", `{"command":"create","path":"/memories/\ud800x","file_text":"x"}`),
		invalidInput("unpaired \\ud800 in file_text", `{"command":"create","path":"/memories/a.md","file_text":"a\ud800"}`),
		invalidInput("two high surrogates", `{"command":"create","path":"/memories/a.md","file_text":"\ud800\ud800"}`),
		invalidInput("lone low surrogate", `{"command":"create","path":"/memories/a.md","file_text":"\udc00"}`),
		invalidInput("unpaired \\ud800 in an unknown field", `{"command":"view","path":"/memories","note":"\ud800"}`),

		// Valid JSON that some decoders get wrong.
		{Name: "paired surrogates decode to one character",
			Input: `{"command":"create","path":"/memories/\ud83d\ude00.md","file_text":"smile"}`,
			Want:  ok("File created successfully at: /memories/\U0001F600.md"), WantFiles: files("/memories/\U0001F600.md", "smile")},
		{Name: "escaped key name", Input: `{"comm\u0061nd":"view","p\u0061th":"/memories"}`, Want: ok(emptyRoot)},
		{Name: "escaped slash in a path", Input: `{"command":"view","path":"\/memories\/"}`, Want: ok(emptyRoot)},
		{Name: "whitespace around the object", Input: " \n{ \"command\" : \"view\" ,\t\"path\" : \"/memories\" }\r\n", Want: ok(emptyRoot)},
		{Name: "unknown fields are ignored", Input: `{"command":"view","path":"/memories","extra":{"deep":[1,2.5,{"x":null}]},"id":"toolu_01"}`, Want: ok(emptyRoot)},
	}
}

func commandCases() []Case {
	required := fail("Parameter `command` is required")
	notString := fail("Parameter `command` must be a string")
	return []Case{
		{Name: "command missing", Input: `{}`, Want: required},
		{Name: "command missing with other fields", Input: `{"path":"/memories"}`, Want: required},
		{Name: "command missing before mistyped fields", Input: `{"path":5,"view_range":"x"}`, Want: required},
		{Name: "command null", Input: `{"command":null,"path":"/memories"}`, Want: required},
		{Name: "command key is case-sensitive", Input: `{"Command":"view","path":"/memories"}`, Want: required},
		{Name: "command number", Input: `{"command":1,"path":"/memories"}`, Want: notString},
		{Name: "command array", Input: `{"command":["view"],"path":"/memories"}`, Want: notString},
		{Name: "command object", Input: `{"command":{"name":"view"}}`, Want: notString},
		{Name: "command bool", Input: `{"command":true}`, Want: notString},
		{Name: "command unknown", Input: `{"command":"list","path":"/memories"}`, Want: fail("Unknown memory command: list" + unknownCommand)},
		{Name: "command is case-sensitive", Input: `{"command":"View","path":"/memories"}`, Want: fail("Unknown memory command: View" + unknownCommand)},
		{Name: "command empty", Input: `{"command":"","path":"/memories"}`, Want: fail("Unknown memory command: " + unknownCommand)},
		{Name: "command with a trailing space", Input: `{"command":"view ","path":"/memories"}`, Want: fail("Unknown memory command: view " + unknownCommand)},
		{Name: "command unknown before mistyped fields", Input: `{"command":"nope","path":5}`, Want: fail("Unknown memory command: nope" + unknownCommand)},
		// docs/spec.md "str_replace": an echoed unknown command is cut at the
		// view limit (code points) and followed by "…".
		{Name: "command unknown, echoed cut at the view limit", Options: memory.Options{ViewLimit: 3}, Input: `{"command":"\u00e9bcd"}`, Want: fail("Unknown memory command: \u00e9bc…" + unknownCommand)},
		{Name: "command unknown, echoed cut at the default view limit", Input: `{"command":"` + strings.Repeat("x", 16001) + `"}`, Want: fail("Unknown memory command: " + strings.Repeat("x", 16000) + "…" + unknownCommand)},
		{Name: "duplicate command: last wins", Input: `{"command":"delete","command":"view","path":"/memories"}`, Want: ok(emptyRoot)},
		{Name: "duplicate command: last is null", Input: `{"command":"view","path":"/memories","command":null}`, Want: required},
		{Name: "duplicate command: first mistyped", Input: `{"command":7,"command":"view","path":"/memories"}`, Want: ok(emptyRoot)},
	}
}

func requiredFor(field, command string) string {
	return "Parameter `" + field + "` is required for command `" + command + "`"
}

func mustBeString(field string) string { return "Parameter `" + field + "` must be a string" }

const (
	notInteger      = "Parameter `insert_line` must be an integer"
	notIntegerArray = "Parameter `view_range` must be an array of integers"
)

func fieldCases() []Case {
	f := files("/memories/a.md", "one\ntwo\nthree")
	rootWithA := listing("/memories", "13B\t/memories", "13B\t/memories/a.md")
	c := []Case{
		// Each missing field, per command, in the order the fields are listed.
		{Name: "view without path", Input: `{"command":"view"}`, Want: fail(requiredFor("path", "view"))},
		{Name: "view with path null", Input: `{"command":"view","path":null}`, Want: fail(requiredFor("path", "view"))},
		{Name: "field names are case-sensitive", Input: `{"command":"view","Path":"/memories"}`, Want: fail(requiredFor("path", "view"))},
		{Name: "create without path", Input: `{"command":"create","file_text":"x"}`, Want: fail(requiredFor("path", "create"))},
		{Name: "create without file_text", Input: `{"command":"create","path":"/memories/a.md"}`, Want: fail(requiredFor("file_text", "create"))},
		{Name: "create with file_text null", Input: `{"command":"create","path":"/memories/a.md","file_text":null}`, Want: fail(requiredFor("file_text", "create"))},
		{Name: "str_replace without path", Input: `{"command":"str_replace","old_str":"a","new_str":"b"}`, Want: fail(requiredFor("path", "str_replace"))},
		{Name: "str_replace without old_str", Input: `{"command":"str_replace","path":"/memories/a.md","new_str":"b"}`, Want: fail(requiredFor("old_str", "str_replace"))},
		{Name: "insert without path", Input: `{"command":"insert","insert_line":0,"insert_text":"x"}`, Want: fail(requiredFor("path", "insert"))},
		{Name: "insert without insert_line", Input: `{"command":"insert","path":"/memories/a.md","insert_text":"x"}`, Want: fail(requiredFor("insert_line", "insert"))},
		{Name: "insert with insert_line null", Input: `{"command":"insert","path":"/memories/a.md","insert_line":null,"insert_text":"x"}`, Want: fail(requiredFor("insert_line", "insert"))},
		{Name: "insert without insert_text", Input: `{"command":"insert","path":"/memories/a.md","insert_line":0}`, Want: fail(requiredFor("insert_text", "insert"))},
		{Name: "delete without path", Input: `{"command":"delete"}`, Want: fail(requiredFor("path", "delete"))},
		{Name: "rename without old_path", Input: `{"command":"rename","new_path":"/memories/b.md"}`, Want: fail(requiredFor("old_path", "rename"))},
		{Name: "rename without new_path", Input: `{"command":"rename","old_path":"/memories/a.md"}`, Want: fail(requiredFor("new_path", "rename"))},
		{Name: "rename does not take path", Input: `{"command":"rename","path":"/memories/a.md","new_path":"/memories/b.md"}`, Want: fail(requiredFor("old_path", "rename"))},

		// Wrong types.
		{Name: "path number", Input: `{"command":"view","path":5}`, Want: fail(mustBeString("path"))},
		{Name: "path array", Input: `{"command":"delete","path":["/memories/a.md"]}`, Want: fail(mustBeString("path"))},
		{Name: "path object", Input: `{"command":"view","path":{"p":"/memories"}}`, Want: fail(mustBeString("path"))},
		{Name: "path bool", Input: `{"command":"view","path":false}`, Want: fail(mustBeString("path"))},
		{Name: "file_text number", Input: `{"command":"create","path":"/memories/b.md","file_text":12}`, Want: fail(mustBeString("file_text"))},
		{Name: "file_text array", Input: `{"command":"create","path":"/memories/b.md","file_text":["x"]}`, Want: fail(mustBeString("file_text"))},
		{Name: "old_str number", Input: `{"command":"str_replace","path":"/memories/a.md","old_str":1,"new_str":"b"}`, Want: fail(mustBeString("old_str"))},
		{Name: "new_str bool", Input: `{"command":"str_replace","path":"/memories/a.md","old_str":"one","new_str":false}`, Want: fail(mustBeString("new_str"))},
		{Name: "insert_text number", Input: `{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":5}`, Want: fail(mustBeString("insert_text"))},
		{Name: "old_path number", Input: `{"command":"rename","old_path":5,"new_path":"/memories/b.md"}`, Want: fail(mustBeString("old_path"))},
		{Name: "new_path object", Input: `{"command":"rename","old_path":"/memories/a.md","new_path":{}}`, Want: fail(mustBeString("new_path"))},

		// Fields are checked in the order listed, and all before any path.
		{Name: "order: create path mistyped, file_text missing", Input: `{"command":"create","path":1}`, Want: fail(mustBeString("path"))},
		{Name: "order: create path missing, file_text mistyped", Input: `{"command":"create","file_text":1}`, Want: fail(requiredFor("path", "create"))},
		{Name: "order: create fields before path validation", Input: `{"command":"create","path":"/etc/passwd","file_text":1}`, Want: fail(mustBeString("file_text"))},
		{Name: "order: str_replace old_str before new_str", Input: `{"command":"str_replace","path":"/memories/a.md","new_str":5}`, Want: fail(requiredFor("old_str", "str_replace"))},
		{Name: "order: str_replace new_str before path validation", Input: `{"command":"str_replace","path":"/memories/../x","old_str":"a","new_str":5}`, Want: fail(mustBeString("new_str"))},
		{Name: "order: insert insert_line before insert_text", Input: `{"command":"insert","insert_text":5,"insert_line":"x","path":"/memories/a.md"}`, Want: fail(notInteger)},
		{Name: "order: insert insert_text before path validation", Input: `{"command":"insert","path":"memories/a.md","insert_line":1,"insert_text":5}`, Want: fail(mustBeString("insert_text"))},
		{Name: "order: rename old_path before new_path", Input: `{"command":"rename","new_path":5,"old_path":5}`, Want: fail(mustBeString("old_path"))},
		{Name: "order: rename new_path before old_path validation", Input: `{"command":"rename","old_path":"/etc/x","new_path":5}`, Want: fail(mustBeString("new_path"))},
		{Name: "order: view path before view_range", Input: `{"command":"view","view_range":"x","path":5}`, Want: fail(mustBeString("path"))},
		{Name: "order: view view_range before path validation", Input: `{"command":"view","path":"/etc/passwd","view_range":"x"}`, Want: fail(notIntegerArray)},

		// Fields of other commands are ignored, even when mistyped.
		{Name: "view ignores other commands' fields", Input: `{"command":"view","path":"/memories","file_text":5,"insert_line":"x","insert_text":false,"old_str":{},"new_str":2,"old_path":1,"new_path":[]}`, Want: ok(rootWithA)},
		{Name: "create ignores view_range and insert_line", Input: `{"command":"create","path":"/memories/b.md","file_text":"b","view_range":"bad","insert_line":2.5,"old_path":0}`,
			Want: ok("File created successfully at: /memories/b.md"), WantFiles: files("/memories/a.md", "one\ntwo\nthree", "/memories/b.md", "b")},
		{Name: "delete ignores new_path and view_range", Input: `{"command":"delete","path":"/memories/a.md","new_path":5,"view_range":{}}`, Want: ok("Successfully deleted /memories/a.md"), WantFiles: files()},
		{Name: "rename ignores path and file_text", Input: `{"command":"rename","path":5,"file_text":5,"view_range":"x","old_path":"/memories/a.md","new_path":"/memories/b.md"}`,
			Want: ok("Successfully renamed /memories/a.md to /memories/b.md"), WantFiles: files("/memories/b.md", "one\ntwo\nthree")},
		{Name: "insert ignores old_str and view_range", Input: `{"command":"insert","path":"/memories/a.md","insert_line":3,"insert_text":"four","old_str":5,"view_range":"x"}`,
			Want: ok("The file /memories/a.md has been edited."), WantFiles: files("/memories/a.md", "one\ntwo\nthree\nfour")},
		{Name: "str_replace ignores insert_line and file_text", Input: `{"command":"str_replace","path":"/memories/a.md","old_str":"two","new_str":"2","insert_line":"x","file_text":[]}`,
			Want: ok(strReplaced(numbered(1, "one", "2", "three"))), WantFiles: files("/memories/a.md", "one\n2\nthree")},

		// Duplicate keys: the last wins; null is absent.
		{Name: "duplicate path: last wins", Input: `{"command":"view","path":"/etc/passwd","path":"/memories"}`, Want: ok(rootWithA)},
		{Name: "duplicate path: last null", Input: `{"command":"view","path":"/memories","path":null}`, Want: fail(requiredFor("path", "view"))},
		{Name: "duplicate file_text: first mistyped", Input: `{"command":"create","path":"/memories/b.md","file_text":5,"file_text":"second"}`,
			Want: ok("File created successfully at: /memories/b.md"), WantFiles: files("/memories/a.md", "one\ntwo\nthree", "/memories/b.md", "second")},
		{Name: "duplicate file_text: last mistyped", Input: `{"command":"create","path":"/memories/b.md","file_text":"first","file_text":5}`, Want: fail(mustBeString("file_text"))},
		{Name: "duplicate view_range: last wins", Input: `{"command":"view","path":"/memories/a.md","view_range":[3,3],"view_range":[1,1]}`, Want: ok(fileView("/memories/a.md", 1, "one"))},
		{Name: "differently cased duplicate is another field", Input: `{"command":"view","path":"/memories/nope","PATH":"/memories"}`,
			Want: fail("The path /memories/nope does not exist. Please provide a valid path.")},
		{Name: "view_range null is absent", Input: `{"command":"view","path":"/memories/a.md","view_range":null}`, Want: ok(fileView("/memories/a.md", 1, "one", "two", "three"))},
	}
	c = append(c, integerCases()...)
	for i := range c {
		if c[i].Files == nil {
			c[i].Files = f
		}
	}
	return c
}

// integerCases: "an integer is a JSON number with no fraction or exponent
// that fits in int64".
func integerCases() []Case {
	insert := func(line string) string {
		return `{"command":"insert","path":"/memories/a.md","insert_line":` + line + `,"insert_text":"x"}`
	}
	view := func(r string) string { return `{"command":"view","path":"/memories/a.md","view_range":` + r + `}` }
	c := []Case{
		{Name: "insert_line min int64 is an integer", Input: insert("-9223372036854775808"),
			Want: fail("Invalid `insert_line` parameter: -9223372036854775808. It should be within the range of lines of the file: [0, 3]")},
		{Name: "insert_line max int64 is an integer", Input: insert("9223372036854775807"),
			Want: fail("Invalid `insert_line` parameter: 9223372036854775807. It should be within the range of lines of the file: [0, 3]")},
		{Name: "view_range max int64 end", Input: view("[2,9223372036854775807]"), Want: ok(fileView("/memories/a.md", 2, "two", "three"))},
		{Name: "view_range min int64 start", Input: view("[-9223372036854775808,1]"), Want: ok(fileView("/memories/a.md", 1, "one"))},
	}
	for _, v := range []string{`2.0`, `2e0`, `2E0`, `20e-1`, `1e20`, `2.5`, `"2"`, `true`, `[2]`, `{}`, `9223372036854775808`, `-9223372036854775809`} {
		c = append(c, Case{Name: "insert_line " + v, Input: insert(v), Want: fail(notInteger)})
	}
	for _, v := range []string{`"1,2"`, `1`, `true`, `{"a":1}`, `[1,"2"]`, `[1,2.0]`, `[1,1e20]`, `[1e0,2]`, `[1,null]`, `[[1],2]`, `[true,1]`, `[1,9223372036854775808]`, `["a"]`} {
		c = append(c, Case{Name: "view_range " + v, Input: view(v), Want: fail(notIntegerArray)})
	}
	// A mistyped view_range is a decoding error even on a directory, where
	// a well-typed one is ignored.
	c = append(c, Case{Name: "view_range mistyped on a directory", Input: `{"command":"view","path":"/memories","view_range":[1.5,2]}`, Want: fail(notIntegerArray)})
	return c
}
