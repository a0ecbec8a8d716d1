package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// The tests open stores named shared://NAME: one in-memory store per NAME,
// the same one every time, so a test can seed a store before a command runs
// and inspect it afterwards.
var (
	sharedMu     sync.Mutex
	sharedStores = map[string]blob.Store{}
)

func init() {
	storeurl.Register("shared", storeurl.Backend{Open: func(_ context.Context, u *url.URL) (blob.Store, error) {
		if err := storeurl.CheckParams(u); err != nil {
			return nil, err
		}
		return sharedStore(u.Host), nil
	}})
}

// sharedStore returns the store that shared://name opens.
func sharedStore(name string) blob.Store {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	s, ok := sharedStores[name]
	if !ok {
		s = mem.New(nil)
		sharedStores[name] = s
	}
	return s
}

// storeName returns a shared store name unique to the test.
func storeName(t *testing.T) string {
	return strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(t.Name()))
}

// cloudmem runs the program in-process with the given arguments, stdin and
// environment, and returns its exit code and outputs.
func cloudmem(args []string, stdin string, env map[string]string) (code int, stdout, stderr string) {
	var out, errOut strings.Builder
	code = run(args, strings.NewReader(stdin), &out, &errOut, func(k string) string { return env[k] })
	return code, out.String(), errOut.String()
}

const globalUsageText = `cloudmem runs the commands of Claude's memory tool against a store.

Usage:
  cloudmem [--store URL] COMMAND [ARGS]

Commands:
  exec   run memory commands read from stdin, one JSON object per line
  demo   run a short scripted session against the store, printing each step
  view   print a memory file or directory
  ls     list a memory directory, with sizes
  cat    write a memory file to stdout, byte for byte
  put    create a memory file from a file or stdin
  rm     delete a memory file or directory
  mv     rename a memory file or directory
  export write every memory file to a directory or a tar stream
  import store the files of a directory or a tar stream as memory files
  copy   copy a whole store to another store, and verify the copy
  keygen write a new age identity file and print its recipient
  rekey  re-encrypt every object of a store to new age recipients
  version print the version of cloudmem
  chat   chat with Claude, which keeps its memory in the store

Flags:
  -store URL
    	the store URL (default $CLOUDMEM_STORE, else ./memories)

The store is --store URL, else $CLOUDMEM_STORE, else ./memories (a local directory).
Run 'cloudmem COMMAND --help' for a command's own flags.
`

const viewUsageText = `Usage: cloudmem [--store URL] view PATH [--range A,B]

Prints the memory file or directory PATH (/memories or a path under it), as the model sees it.

Flags:
  -range A,B
    	show only lines A,B of a file (B = -1: to the end)
`

const execUsageText = `Usage: cloudmem [--store URL] exec < commands.jsonl

Reads memory commands (the input JSON of a tool_use block), one per line, from stdin,
and writes one result per line to stdout, in the same order:
  {"content":"<text>","is_error":false}
An image result's content is an array with one image block. A line that is not a valid
command gets an error result and the next line runs.

Flags:
  (none)
`

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"--help"}, 0, globalUsageText, ""},
		{[]string{"-h"}, 0, globalUsageText, ""},
		{nil, 2, "", "cloudmem: no command given\n\n" + globalUsageText},
		{[]string{"--store", "mem://"}, 2, "", "cloudmem: no command given\n\n" + globalUsageText},
		{[]string{"frobnicate"}, 2, "", "cloudmem: unknown command \"frobnicate\"\n\n" + globalUsageText},
		{[]string{"--colour", "exec"}, 2, "", "cloudmem: flag provided but not defined: -colour\n\n" + globalUsageText},
		{[]string{"--store"}, 2, "", "cloudmem: flag needs an argument: -store\n\n" + globalUsageText},
		{[]string{"exec", "--help"}, 0, execUsageText, ""},
		{[]string{"exec", "now"}, 2, "", "cloudmem exec: unexpected argument \"now\"\n\n" + execUsageText},
		{[]string{"view", "--help"}, 0, viewUsageText, ""},
		{[]string{"view", "/memories", "--help"}, 0, viewUsageText, ""},
		{[]string{"view"}, 2, "", "cloudmem view: no PATH given\n\n" + viewUsageText},
		{[]string{"view", "/memories", "/memories/a"}, 2, "", "cloudmem view: unexpected argument \"/memories/a\"\n\n" + viewUsageText},
		{[]string{"view", "--range", "1", "/memories/a"}, 2, "", "cloudmem view: --range \"1\": want two integers A,B, such as 1,20\n\n" + viewUsageText},
		{[]string{"view", "/memories/a", "--range", "1,x"}, 2, "", "cloudmem view: --range \"1,x\": want two integers A,B, such as 1,20\n\n" + viewUsageText},
		{[]string{"view", "/memories/a", "--range"}, 2, "", "cloudmem view: flag needs an argument: -range\n\n" + viewUsageText},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s",
				tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
}

func TestDemoHelp(t *testing.T) {
	code, stdout, stderr := cloudmem([]string{"demo", "-help"}, "", nil)
	want := `Usage: cloudmem [--store URL] demo

Runs a short memory session (view, create, str_replace, insert, view, rename, view, delete)
in /memories/cloudmem-demo of the store, printing each command and its result.
The directory is deleted at the end, so the demo can run again.

Flags:
  (none)
`
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("cloudmem demo -help = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}

// TestStoreChoice checks where the store URL comes from: --store, else
// $CLOUDMEM_STORE, else ./memories.
func TestStoreChoice(t *testing.T) {
	const bad = "mem://?readonly=maybe"
	const badErr = "cloudmem view: storeurl: readonly=maybe: want true, false, 1 or 0\n"
	const root = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories\n"
	for _, tc := range []struct {
		args           []string
		env            map[string]string
		code           int
		stdout, stderr string
	}{
		{[]string{"--store", bad, "view", "/memories"}, nil, 1, "", badErr},
		{[]string{"--store", bad, "view", "/memories"}, map[string]string{storeEnv: "mem://"}, 1, "", badErr},
		{[]string{"view", "/memories"}, map[string]string{storeEnv: bad}, 1, "", badErr},
		{[]string{"--store", "mem://", "view", "/memories"}, map[string]string{storeEnv: bad}, 0, root, ""},
		{[]string{"--store=mem://", "view", "/memories"}, map[string]string{storeEnv: bad}, 0, root, ""},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", tc.env)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q with env %v = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s",
				tc.args, tc.env, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestDefaultStore checks that with no --store and no $CLOUDMEM_STORE the
// store is the directory ./memories.
func TestDefaultStore(t *testing.T) {
	t.Chdir(t.TempDir())
	code, stdout, stderr := cloudmem([]string{"exec"}, `{"command":"create","path":"/memories/a.md","file_text":"hi"}`, nil)
	if want := `{"content":"File created successfully at: /memories/a.md","is_error":false}` + "\n"; code != 0 || stdout != want || stderr != "" {
		t.Fatalf("exec = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
	if data, err := os.ReadFile(filepath.Join("memories", "a.md")); err != nil || string(data) != "hi" {
		t.Errorf("memories/a.md holds %q, %v; want \"hi\"", data, err)
	}
}
