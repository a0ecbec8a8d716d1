package main

import (
	"context"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

func TestView(t *testing.T) {
	name := storeName(t)
	if _, err := sharedStore(name).Put(context.Background(), "notes/a.md", []byte("one\ntwo\nthree\n"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	store := "shared://" + name
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"view", "/memories/notes/a.md"}, 0,
			"Here's the content of /memories/notes/a.md with line numbers:\n     1\tone\n     2\ttwo\n     3\tthree\n     4\t\n", ""},
		{[]string{"view", "/memories/notes/a.md", "--range", "2,3"}, 0,
			"Here's the content of /memories/notes/a.md with line numbers:\n     2\ttwo\n     3\tthree\n", ""},
		{[]string{"view", "--range=2,-1", "/memories/notes/a.md"}, 0,
			"Here's the content of /memories/notes/a.md with line numbers:\n     2\ttwo\n     3\tthree\n     4\t\n", ""},
		{[]string{"view", "/memories/notes/"}, 0,
			"Here're the files and directories up to 2 levels deep in /memories/notes, excluding hidden items and node_modules:\n14B\t/memories/notes\n14B\t/memories/notes/a.md\n", ""},
		{[]string{"view", "/memories/notes/a.md", "--range", "7,9"}, 1, "",
			"cloudmem view: Invalid `view_range` parameter: [7, 9]. The file /memories/notes/a.md has 4 lines\n"},
		{[]string{"view", "/memories/nope"}, 1, "",
			"cloudmem view: The path /memories/nope does not exist. Please provide a valid path.\n"},
		{[]string{"view", "/etc/passwd"}, 1, "",
			"cloudmem view: Path must start with /memories, got: /etc/passwd\n"},
	} {
		args := append([]string{"--store", store}, tc.args...)
		code, stdout, stderr := cloudmem(args, "", nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s",
				tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
}
