package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestExecCreatesOnFirstWrite runs exec on a directory that does not exist:
// views, and commands that fail, answer as on an empty store and create
// nothing; the first create makes the directory and its file.
func TestExecCreatesOnFirstWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "store")
	reads := `{"command":"view","path":"/memories"}
{"command":"view","path":"/memories/a.md"}
{"command":"delete","path":"/memories/a.md"}
{"command":"rename","old_path":"/memories/a.md","new_path":"/memories/b.md"}
{"command":"str_replace","path":"/memories/a.md","old_str":"x","new_str":"y"}
`
	want := `{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories","is_error":false}
{"content":"Error: The path /memories/a.md does not exist. Please provide a valid path.","is_error":true}
{"content":"Error: The path /memories/a.md does not exist","is_error":true}
{"content":"Error: The path /memories/a.md does not exist","is_error":true}
{"content":"Error: The path /memories/a.md does not exist. Please provide a valid path.","is_error":true}
`
	for _, store := range []string{dir, "file:" + dir} {
		code, stdout, stderr := cloudmem([]string{"exec", "--store", store}, reads, nil)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("exec of reads on %s = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", store, code, stdout, stderr, want)
		}
		runCases(t, store, []cliCase{
			{args: []string{"rm", "/memories/a.md"}, code: 1, stderr: "cloudmem rm: The path /memories/a.md does not exist\n"},
			{args: []string{"import", "-"}, stdin: "not a tar stream, but long enough to fill a header block? " + string(make([]byte, 600)),
				code: 1, stderr: "cloudmem import: reading the tar stream: archive/tar: invalid tar header\n"},
		})
	}
	if _, err := os.Stat(filepath.Dir(dir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after commands that write nothing, %s: %v; want it missing", filepath.Dir(dir), err)
	}
	code, stdout, stderr := cloudmem([]string{"exec", "--store", dir}, `{"command":"create","path":"/memories/a.md","file_text":"hi"}`, nil)
	if want := `{"content":"File created successfully at: /memories/a.md","is_error":false}` + "\n"; code != 0 || stdout != want || stderr != "" {
		t.Fatalf("exec create = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a.md")); err != nil || string(data) != "hi" {
		t.Errorf("%s/a.md holds %q, %v; want \"hi\"", dir, data, err)
	}
}

// TestMissingStoreChecksParameters checks that a missing directory's URL
// parameters are checked when the store is opened, not at the first write,
// and that checking them creates nothing.
func TestMissingStoreChecksParameters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	runCases(t, "file:"+dir+"?readonly=maybe", []cliCase{
		{args: []string{"exec"}, stdin: `{"command":"view","path":"/memories"}`, code: 1,
			stderr: "cloudmem exec: storeurl: readonly=\"maybe\": want true, false, 1 or 0\n"},
	})
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %v; want it missing", dir, err)
	}
}
