package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// cliCase is one run of the program and everything it should produce.
type cliCase struct {
	args           []string
	stdin          string
	code           int
	stdout, stderr string
}

// runCases runs each case with --store store in front of its arguments and
// compares the exit code and both whole outputs.
func runCases(t *testing.T, store string, cases []cliCase) {
	t.Helper()
	for _, tc := range cases {
		args := append([]string{"--store", store}, tc.args...)
		code, stdout, stderr := cloudmem(args, tc.stdin, nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s",
				tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
}

// seed puts files (key → content) into the shared store name and returns
// its URL.
func seed(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	for key, content := range files {
		if _, err := sharedStore(name).Put(context.Background(), key, []byte(content), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	return "shared://" + name
}

// contents returns every object of the shared store name, bookkeeping
// included, as key → content.
func contents(t *testing.T, name string) map[string]string {
	t.Helper()
	return storeContents(t, sharedStore(name))
}

// storeContents reads every key of s with its content, except the memory
// handlers' file count (memory.FileCountKey, at any depth: a mount's).
func storeContents(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	infos, err := blob.ListAll(context.Background(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if isFileCount(info.Key) {
			continue
		}
		data, _, err := s.Get(context.Background(), info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		out[info.Key] = string(data)
	}
	return out
}

// smallTree is a store with a file at the top, a directory two levels
// deep, a hidden file, node_modules, and bookkeeping.
var smallTree = map[string]string{
	"todo.md":              "- milk\n",                // 7
	"notes/a.md":           "alpha\n",                 // 6
	"notes/deep/b.md":      "bravo bravo\n",           // 12
	"notes/deep/more/c.md": "c",                       // 1
	"notes/.hidden":        "h",                       // 1
	"node_modules/x.js":    strings.Repeat("x", 2000), // 2000
	".cloudmem/journal":    "not a memory file",
	"big/one.bin":          strings.Repeat("b", 1280), // 1280
}

func TestLs(t *testing.T) {
	store := seed(t, storeName(t), smallTree)
	runCases(t, store, []cliCase{
		{args: []string{"ls"}, stdout: `1280  /memories/big/one.bin
2000  /memories/node_modules/x.js
   1  /memories/notes/.hidden
   6  /memories/notes/a.md
  12  /memories/notes/deep/b.md
   1  /memories/notes/deep/more/c.md
   7  /memories/todo.md
`},
		{args: []string{"ls", "/memories/notes/"}, stdout: ` 1  /memories/notes/.hidden
 6  /memories/notes/a.md
12  /memories/notes/deep/b.md
 1  /memories/notes/deep/more/c.md
`},
		{args: []string{"ls", "/memories/notes/a.md"}, code: 1,
			stderr: "cloudmem ls: The path /memories/notes/a.md is a file, not a directory\n"},
		{args: []string{"ls", "/memories/nope"}, code: 1,
			stderr: "cloudmem ls: The path /memories/nope does not exist\n"},
		{args: []string{"ls", "/memories/.cloudmem"}, code: 1,
			stderr: "cloudmem ls: Path /memories/.cloudmem is reserved\n"},
		{args: []string{"ls", "/tmp"}, code: 1,
			stderr: "cloudmem ls: Path must start with /memories, got: /tmp\n"},
	})
	runCases(t, "mem://", []cliCase{{args: []string{"ls"}, stdout: ""}, {args: []string{"ls", "--json"}, stdout: "[]\n"}})
}

// TestLsJSON checks ls --json: every file with its path, size, version and
// modification time, as the store reports them.
func TestLsJSON(t *testing.T) {
	name := storeName(t)
	store := seed(t, name, map[string]string{"a.md": "alpha", "d/b.md": "bravo!", ".cloudmem/k": "reserved"})
	var entries []string
	for _, key := range []string{"a.md", "d/b.md"} {
		info, err := sharedStore(name).Stat(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, fmt.Sprintf(`{"path":"/memories/%s","size":%d,"version":%q,"modified":%q}`,
			key, info.Size, info.Version, info.Modified.UTC().Format(time.RFC3339Nano)))
	}
	runCases(t, store, []cliCase{
		{args: []string{"ls", "--json"}, stdout: "[" + strings.Join(entries, ",") + "]\n"},
		{args: []string{"ls", "/memories/d", "--json"}, stdout: "[" + entries[1] + "]\n"},
	})
}

func TestCat(t *testing.T) {
	binary := "\x89PNG\r\n\x1a\n\x00\xff not text"
	store := seed(t, storeName(t), map[string]string{
		"notes/a.md":   "one\ntwo\n",
		"empty.md":     "",
		"bin/data":     binary,
		"long.txt":     strings.Repeat("line\n", 20000), // over the view limit: cat prints it whole
		"dir/x/y.md":   "y",
		".hidden/h.md": "hidden",
	})
	runCases(t, store, []cliCase{
		{args: []string{"cat", "/memories/notes/a.md"}, stdout: "one\ntwo\n"},
		{args: []string{"cat", "/memories//notes/./a.md"}, stdout: "one\ntwo\n"},
		{args: []string{"cat", "/memories/empty.md"}, stdout: ""},
		{args: []string{"cat", "/memories/bin/data"}, stdout: binary},
		{args: []string{"cat", "/memories/long.txt"}, stdout: strings.Repeat("line\n", 20000)},
		{args: []string{"cat", "/memories/.hidden/h.md"}, stdout: "hidden"},
		{args: []string{"cat", "/memories/dir"}, code: 1, stderr: "cloudmem cat: The path /memories/dir is not a file.\n"},
		{args: []string{"cat", "/memories"}, code: 1, stderr: "cloudmem cat: The path /memories is not a file.\n"},
		{args: []string{"cat", "/memories/missing"}, code: 1,
			stderr: "cloudmem cat: The path /memories/missing does not exist\n"},
		{args: []string{"cat", "/memories/../etc/passwd"}, code: 1,
			stderr: "cloudmem cat: Path /memories/../etc/passwd would escape /memories directory\n"},
		{args: []string{"cat", "/memories/a\tb"}, code: 1,
			stderr: "cloudmem cat: Path /memories/a\tb contains invalid characters\n"},
	})
}

func TestPut(t *testing.T) {
	name := storeName(t)
	store := seed(t, name, map[string]string{"old.md": "old", "dir/f.md": "f"})
	file := filepath.Join(t.TempDir(), "content.txt")
	if err := os.WriteFile(file, []byte("from a file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	absent := filepath.Join(t.TempDir(), "absent")
	latin1 := filepath.Join(t.TempDir(), "latin1.txt")
	if err := os.WriteFile(latin1, []byte("caf\xe9"), 0o600); err != nil {
		t.Fatal(err)
	}
	runCases(t, store, []cliCase{
		{args: []string{"put", "/memories/new/a.md"}, stdin: "from stdin\n",
			stdout: "File created successfully at: /memories/new/a.md\n"},
		{args: []string{"put", "/memories/b.md", "-"}, stdin: "dash",
			stdout: "File created successfully at: /memories/b.md\n"},
		{args: []string{"put", "/memories/c.md", file},
			stdout: "File created successfully at: /memories/c.md\n"},
		{args: []string{"put", "/memories/old.md", file}, code: 1,
			stderr: "cloudmem put: File /memories/old.md already exists\n"},
		{args: []string{"put", "--force", "/memories/old.md", file},
			stdout: "File created successfully at: /memories/old.md\n"},
		{args: []string{"put", "/memories/dir", file, "--force"}, code: 1,
			stderr: "cloudmem put: File /memories/dir already exists\n"},
		{args: []string{"put", "/memories/c.md/x", file}, code: 1,
			stderr: "cloudmem put: The path /memories/c.md is a file, not a directory\n"},
		{args: []string{"put", "/memories/huge.md"}, stdin: strings.Repeat("x", 100_001), code: 1,
			stderr: "cloudmem put: File /memories/huge.md would be 100001 bytes, over the limit of 100000 bytes per memory file\n"},
		{args: []string{"put", "/memories/.cloudmem/k"}, stdin: "x", code: 1,
			stderr: "cloudmem put: Path /memories/.cloudmem/k is reserved\n"},
		{args: []string{"put", "/memories/l.txt", latin1}, code: 1,
			stderr: "cloudmem put: " + latin1 + " is not UTF-8 text; memory files are text (import stores any bytes)\n"},
		{args: []string{"put", "/memories/l.txt"}, stdin: "\xff", code: 1,
			stderr: "cloudmem put: stdin is not UTF-8 text; memory files are text (import stores any bytes)\n"},
		{args: []string{"put", "/memories/n.txt", absent}, code: 1,
			stderr: "cloudmem put: reading the content: open " + absent + ": no such file or directory\n"},
	})
	want := map[string]string{
		"new/a.md": "from stdin\n",
		"b.md":     "dash",
		"c.md":     "from a file\n",
		"old.md":   "from a file\n",
		"dir/f.md": "f",
	}
	if got := contents(t, name); !equalMaps(got, want) {
		t.Errorf("the store holds %q, want %q", got, want)
	}
	runCases(t, "mem://?readonly=true", []cliCase{{args: []string{"put", "/memories/a.md"}, stdin: "x", code: 1,
		stderr: "cloudmem put: The memory directory is read-only: create is not allowed\n"}})
}

func TestRmMv(t *testing.T) {
	name := storeName(t)
	store := seed(t, name, map[string]string{"a.md": "a", "dir/b.md": "b", "dir/sub/c.md": "c", "keep.md": "k"})
	runCases(t, store, []cliCase{
		{args: []string{"mv", "/memories/a.md", "/memories/moved/a.md"},
			stdout: "Successfully renamed /memories/a.md to /memories/moved/a.md\n"},
		{args: []string{"mv", "/memories/dir", "/memories/folder"},
			stdout: "Successfully renamed /memories/dir to /memories/folder\n"},
		{args: []string{"mv", "/memories/a.md", "/memories/z.md"}, code: 1,
			stderr: "cloudmem mv: The path /memories/a.md does not exist\n"},
		{args: []string{"mv", "/memories/keep.md", "/memories/folder"}, code: 1,
			stderr: "cloudmem mv: The destination /memories/folder already exists\n"},
		{args: []string{"mv", "/memories/folder", "/memories/folder/in"}, code: 1,
			stderr: "cloudmem mv: Cannot move /memories/folder into itself (/memories/folder/in)\n"},
		{args: []string{"mv", "--dry-run", "keep.md", "k2.md"}, stdout: "would rename /memories/keep.md to /memories/k2.md\n"},
		{args: []string{"mv", "--dry-run", "folder", "f2"}, stdout: "would rename /memories/folder to /memories/f2\n"},
		{args: []string{"mv", "--dry-run", "keep.md", "folder"}, code: 1,
			stderr: "cloudmem mv: The destination /memories/folder already exists\n"},
		{args: []string{"mv", "--dry-run", "none.md", "x.md"}, code: 1,
			stderr: "cloudmem mv: The path /memories/none.md does not exist\n"},
		{args: []string{"mv", "--dry-run", "folder", "folder/in"}, code: 1,
			stderr: "cloudmem mv: Cannot move /memories/folder into itself (/memories/folder/in)\n"},
		{args: []string{"mv", "--dry-run", "folder/b.md", "keep.md/z"}, code: 1,
			stderr: "cloudmem mv: The path /memories/keep.md is a file, not a directory\n"},
		{args: []string{"rm", "--dry-run", "-r", "."}, code: 1, stderr: "cloudmem rm: Cannot delete the /memories directory itself\n"},
		{args: []string{"rm", "/memories/folder"}, code: 1,
			stderr: "cloudmem rm: /memories/folder is a directory: rm -r deletes it with everything beneath it\n"},
		{args: []string{"rm", "folder/"}, code: 1,
			stderr: "cloudmem rm: /memories/folder is a directory: rm -r deletes it with everything beneath it\n"},
		{args: []string{"rm", "--dry-run", "-r", "folder"}, stdout: "would delete /memories/folder/b.md\nwould delete /memories/folder/sub/c.md\n"},
		{args: []string{"rm", "--dry-run", "keep.md"}, stdout: "would delete /memories/keep.md\n"},
		{args: []string{"rm", "--dry-run", "none.md"}, code: 1, stderr: "cloudmem rm: The path /memories/none.md does not exist\n"},
		{args: []string{"rm", "-r", "/memories/folder"}, stdout: "Successfully deleted /memories/folder\n"},
		{args: []string{"rm", "-r", "/memories/folder"}, code: 1, stderr: "cloudmem rm: The path /memories/folder does not exist\n"},
		{args: []string{"rm", "/memories/"}, code: 1, stderr: "cloudmem rm: Cannot delete the /memories directory itself\n"},
		{args: []string{"rm", "-r", "."}, code: 1, stderr: "cloudmem rm: Cannot delete the /memories directory itself\n"},
		{args: []string{"rm", "/etc/passwd"}, code: 1, stderr: "cloudmem rm: Path must start with /memories, got: /etc/passwd\n"},
		{args: []string{"put", "rel/n.md"}, stdin: "n", stdout: "File created successfully at: /memories/rel/n.md\n"},
		{args: []string{"cat", "rel/n.md"}, stdout: "n"},
		{args: []string{"rm", "rel/n.md"}, stdout: "Successfully deleted /memories/rel/n.md\n"},
	})
	want := map[string]string{"moved/a.md": "a", "keep.md": "k"}
	if got := contents(t, name); !equalMaps(got, want) {
		t.Errorf("the store holds %q, want %q", got, want)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestSubcommandUsage checks --help and the usage errors of every command
// added with ls: help goes to stdout with exit 0 and starts with what the
// command does; a usage error is the message, the synopsis and where to read
// more, on stderr, with exit 2.
func TestSubcommandUsage(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		args []string // bad arguments
		msg  string
		use  string
	}{
		{"ls", []string{"/memories", "/memories/a"}, `unexpected argument "/memories/a"`, "ls [PATH] [-h] [--json]"},
		{"cat", nil, "no PATH given", "cat PATH"},
		{"cat", []string{"a", "b"}, `unexpected argument "b"`, "cat PATH"},
		{"put", nil, "no PATH given", "put PATH [FILE|-] [--force]"},
		{"put", []string{"/memories/a", "f", "g"}, `unexpected argument "g"`, "put PATH [FILE|-] [--force]"},
		{"put", []string{"--force=maybe", "/memories/a"}, `invalid argument "maybe" for "--force" flag: strconv.ParseBool: parsing "maybe": invalid syntax`, "put PATH [FILE|-] [--force]"},
		{"rm", nil, "no PATH given", "rm [-r] [--dry-run] PATH"},
		{"rm", []string{"a", "b"}, `unexpected argument "b"`, "rm [-r] [--dry-run] PATH"},
		{"mv", nil, "no OLD and NEW given", "mv [--dry-run] OLD NEW"},
		{"mv", []string{"a"}, "no NEW given", "mv [--dry-run] OLD NEW"},
		{"mv", []string{"a", "b", "c"}, `unexpected argument "c"`, "mv [--dry-run] OLD NEW"},
		{"export", nil, "no DIR given (- writes a tar stream to stdout)", "export DIR|-"},
		{"export", []string{"a", "b"}, `unexpected argument "b"`, "export DIR|-"},
		{"import", nil, "no DIR given (- reads a tar stream from stdin)", "import DIR|- [--overwrite] [--dry-run]"},
		{"import", []string{"-", "--colour"}, "unknown flag: --colour", "import DIR|- [--overwrite] [--dry-run]"},
		{"copy", nil, "no SRC_URL and DST_URL given", "copy SRC_URL DST_URL [--jobs N] [--overwrite] [--dry-run]"},
		{"copy", []string{"mem://"}, "no DST_URL given", "copy SRC_URL DST_URL [--jobs N] [--overwrite] [--dry-run]"},
		{"copy", []string{"mem://", "mem://", "mem://"}, `unexpected argument "mem://"`, "copy SRC_URL DST_URL [--jobs N] [--overwrite] [--dry-run]"},
		{"copy", []string{"mem://", "mem://", "--jobs", "0"}, "--jobs 0: want 1 or more", "copy SRC_URL DST_URL [--jobs N] [--overwrite] [--dry-run]"},
		{"keygen", nil, "no -o FILE given", "keygen -o FILE [--post-quantum]"},
		{"keygen", []string{"-o", "f", "g"}, `unexpected argument "g"`, "keygen -o FILE [--post-quantum]"},
		{"rekey", nil, "no --to-recipients given", "rekey --to-recipients age1...,age1... [--identity-file FILE]..."},
		{"rekey", []string{"--to-recipients", "AGE-SECRET-KEY-1XYZ"}, "--to-recipients: crypt: recipient 1 is not a valid age public key (age1... or age1pq1...)", "rekey --to-recipients age1...,age1... [--identity-file FILE]..."},
		{"version", []string{"now"}, `unexpected argument "now"`, "version"},
	} {
		root := (&app{getenv: func(string) string { return "" }}).rootCmd()
		sub, _, err := root.Find([]string{tc.cmd})
		if err != nil {
			t.Fatal(err)
		}
		code, help, stderr := cloudmem([]string{tc.cmd, "--help"}, "", nil)
		if code != 0 || !strings.HasPrefix(help, sub.Long+"\n\nUsage:\n  cloudmem "+tc.use+"\n\nFlags:\n") || stderr != "" {
			t.Errorf("cloudmem %s --help = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and the help on stdout", tc.cmd, code, help, stderr)
			continue
		}
		want := usageErr(tc.cmd, tc.msg, tc.use)
		code, stdout, stderr := cloudmem(append([]string{"--store", "mem://", tc.cmd}, tc.args...), "", nil)
		if code != 2 || stdout != "" || stderr != want {
			t.Errorf("cloudmem %s %q = %d\nstdout:\n%s\nstderr:\n%s\nwant 2 and stderr:\n%s", tc.cmd, tc.args, code, stdout, stderr, want)
		}
	}
}

func TestLsHelp(t *testing.T) {
	want := commandHelp(`Lists every memory file under the directory PATH (default /memories), recursively and in
byte order, hidden files included: each line is the size in bytes and the path. -h prints
sizes as 1.5K, 12M (powers of 1024). With --json, one JSON array of {"path", "size",
"version", "modified"} objects. A PATH not starting with / is relative to /memories.`, "ls [PATH] [-h] [--json]", `      --help             help for ls
  -h, --human-readable   print sizes as 1.5K, 12M, 3.0G (powers of 1024); --help is the help
      --json             print a JSON array of objects with path, size, version and modified
`)
	runCases(t, "mem://", []cliCase{{args: []string{"ls", "--help"}, stdout: want}})
}

// TestLsHuman: ls -h prints sizes as ls -h does, aligned.
func TestLsHuman(t *testing.T) {
	store := seed(t, storeName(t), map[string]string{
		"a.md":     strings.Repeat("a", 512),
		"b/big.md": strings.Repeat("b", 1536),
		"c.md":     strings.Repeat("c", 12*1024+1),
	})
	runCases(t, store, []cliCase{
		{args: []string{"ls", "-h"}, stdout: " 512  /memories/a.md\n1.5K  /memories/b/big.md\n 13K  /memories/c.md\n"},
		{args: []string{"ls", "-h", "b"}, stdout: "1.5K  /memories/b/big.md\n"},
		{args: []string{"ls", "b"}, stdout: "1536  /memories/b/big.md\n"},
	})
}

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 1: "1", 1023: "1023", 1024: "1.0K", 1025: "1.1K", 1536: "1.5K", 10188: "10K", 10240: "10K",
		10241: "11K", 1048575: "1.0M", 1048576: "1.0M", 3 << 20: "3.0M", 12 << 20: "12M", 1 << 30: "1.0G",
		5 << 40: "5.0T", 1 << 62: "4.0E", 1<<63 - 1: "8.0E",
	} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// isFileCount reports whether key is a memory handler's bookkeeping (its
// file count).
func isFileCount(key string) bool { return memory.IsBookkeeping(key) }
