package main

import (
	"context"
	"fmt"
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
	storeurl.Register("shared", storeurl.Backend{Open: func(_ context.Context, loc *storeurl.Location) (blob.Store, error) {
		return sharedStore(loc.URL.Host), nil
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

// usageErr is the whole stderr of a usage error of the command path cmd
// ("" for the root, "view"), whose synopsis is use: the message, the
// synopsis, and where to read more.
func usageErr(cmd, msg, use string) string {
	path := strings.TrimSpace("cloudmem " + cmd)
	return path + ": " + msg + "\nUsage: cloudmem " + use + "\nRun '" + path + " --help' for more.\n"
}

// globalFlags is the "Global Flags" section of every command's help: the
// persistent flags of the root, aligned.
func globalFlags() string {
	a := &app{getenv: func(string) string { return "" }}
	return "Global Flags:\n" + a.rootCmd().PersistentFlags().FlagUsages()
}

// commandHelp is the whole help of a command: about, its synopsis, its own
// flags (aligned, with -h), and the global flags.
func commandHelp(about, use, flags string) string {
	return about + "\n\nUsage:\n  cloudmem " + use + "\n\nFlags:\n" + flags + "\n" + globalFlags()
}

const execHelpAbout = `Reads memory commands (the input JSON of a tool_use block), one per line, from stdin,
and writes one result per line to stdout, in the same order:
  {"content":"<text>","is_error":false}
An image result's content is an array with one image block. A line that is not a valid
command gets an error result and the next line runs. Exit status 1 when a command failed on
storage (after the last result), unless --exit-zero.`

var execHelp = commandHelp(execHelpAbout, "exec [--actor NAME] [--exit-zero] < commands.jsonl",
	`      --actor NAME   the NAME the store's history records as the author of the changes (default user@host)
      --exit-zero    exit 0 even when commands failed on storage (the results say so)
  -h, --help         help for exec
`)

var viewHelp = commandHelp("Prints the memory file or directory PATH (/memories or a path under it), as the model sees it.",
	"view PATH [--range A,B]",
	`  -h, --help        help for view
      --range A,B   show only lines A,B of a file (B = -1: to the end)
`)

const rootUse = "COMMAND [ARGS]"

// TestRootHelp checks the head of the top-level help and that it lists
// every command, each with its summary, aligned.
func TestRootHelp(t *testing.T) {
	code, stdout, stderr := cloudmem([]string{"--help"}, "", nil)
	const head = `cloudmem runs the commands of Claude's memory tool against a store: a local directory,
a bucket (s3://, gs://, azblob://), Redis (redis://), optionally encrypted (encrypt=age).

The store is --store URL, else $CLOUDMEM_STORE, else the config file's default, else ./memories
(a local directory). --store and $CLOUDMEM_STORE take a store's name in the config file too
(a value with no ':' and no '/'): see 'cloudmem help config'.

Usage:
  cloudmem COMMAND [ARGS]

Available Commands:
`
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, head) {
		t.Fatalf("cloudmem --help = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout starting with:\n%s", code, stdout, stderr, head)
	}
	root := (&app{getenv: func(string) string { return "" }}).rootCmd()
	for _, cmd := range root.Commands() {
		line := fmt.Sprintf("\n  %-11s %s\n", cmd.Name(), cmd.Short)
		if cmd.Name() != "completion" && cmd.Name() != "help" && !strings.Contains(stdout, line) {
			t.Errorf("the help lacks the line %q", line)
		}
	}
	if code, short, _ := cloudmem([]string{"-h"}, "", nil); code != 0 || short != stdout {
		t.Errorf("cloudmem -h = %d and another text than --help", code)
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{nil, 2, "", usageErr("", "no command given", rootUse)},
		{[]string{"--store", "mem://"}, 2, "", usageErr("", "no command given", rootUse)},
		{[]string{"frobnicate"}, 2, "", usageErr("", `unknown command "frobnicate"`, rootUse)},
		{[]string{"exce"}, 2, "", usageErr("", `unknown command "exce"; did you mean exec?`, rootUse)},
		{[]string{"--colour", "exec"}, 2, "", usageErr("", "unknown flag: --colour", rootUse)},
		{[]string{"--store"}, 2, "", usageErr("", "flag needs an argument: --store", rootUse)},
		{[]string{"exec", "--help"}, 0, execHelp, ""},
		{[]string{"help", "exec"}, 0, execHelp, ""},
		{[]string{"exec", "now"}, 2, "", usageErr("exec", `unexpected argument "now"`, "exec [--actor NAME] [--exit-zero] < commands.jsonl")},
		{[]string{"exec", "--store"}, 2, "", usageErr("exec", "flag needs an argument: --store", "exec [--actor NAME] [--exit-zero] < commands.jsonl")},
		{[]string{"view", "--help"}, 0, viewHelp, ""},
		{[]string{"view", "/memories", "--help"}, 0, viewHelp, ""},
		{[]string{"view"}, 2, "", usageErr("view", "no PATH given", "view PATH [--range A,B]")},
		{[]string{"view", "/memories", "/memories/a"}, 2, "", usageErr("view", `unexpected argument "/memories/a"`, "view PATH [--range A,B]")},
		{[]string{"view", "--range", "1", "/memories/a"}, 2, "", usageErr("view", `--range "1": want two integers A,B, such as 1,20`, "view PATH [--range A,B]")},
		{[]string{"view", "/memories/a", "--range", "1,x"}, 2, "", usageErr("view", `--range "1,x": want two integers A,B, such as 1,20`, "view PATH [--range A,B]")},
		{[]string{"view", "/memories/a", "--range"}, 2, "", usageErr("view", "flag needs an argument: --range", "view PATH [--range A,B]")},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s",
				tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestVersionFlag checks that --version prints what the version command
// prints.
func TestVersionFlag(t *testing.T) {
	want := versionLine(buildInfo()) + "\n"
	code, stdout, stderr := cloudmem([]string{"--version"}, "", nil)
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("cloudmem --version = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}

// TestCompletion checks that a shell completion script is generated and
// that the completion of a command name offers the commands.
func TestCompletion(t *testing.T) {
	code, stdout, stderr := cloudmem([]string{"completion", "bash"}, "", nil)
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "# bash completion V2 for cloudmem") {
		t.Errorf("cloudmem completion bash = %d, stderr %q, stdout starting %q", code, stderr, stdout[:min(len(stdout), 60)])
	}
	code, stdout, stderr = cloudmem([]string{"__complete", "ex"}, "", nil)
	want := "exec\tRun memory commands read from stdin, one JSON object per line\n" +
		"expire\tDelete the memory files that expired\n" +
		"export\tWrite every memory file to a directory or a tar stream\n:4\n"
	if code != 0 || stdout != want {
		t.Errorf("cloudmem __complete ex = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}

func TestDemoHelp(t *testing.T) {
	code, stdout, stderr := cloudmem([]string{"demo", "--help"}, "", nil)
	want := commandHelp(`Runs a short memory session (view, create, str_replace, insert, view, rename, view, delete)
in a new directory /memories/cloudmem-demo-XXXXXXXX of the store (with --mount, in the first
writable mount), printing each command and its result. The demo deletes the directory at the
end and touches nothing else.`, "demo", "  -h, --help   help for demo\n")
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("cloudmem demo --help = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}

// TestStoreChoice checks where the store URL comes from: --store, else
// $CLOUDMEM_STORE, else ./memories.
func TestStoreChoice(t *testing.T) {
	const bad = "mem://?readonly=maybe"
	const badErr = "cloudmem view: storeurl: readonly=\"maybe\": want true, false, 1 or 0\n"
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
		{[]string{"view", "/memories", "--store", "mem://"}, map[string]string{storeEnv: bad}, 0, root, ""},
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
