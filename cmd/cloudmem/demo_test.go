package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// testDemoDir is the directory the demo works in during the tests on a
// store without mounts, where useDemoDir sets it.
const testDemoDir = "/memories/cloudmem-demo"

// useDemoDir makes the demo work in cloudmem-demo under the directory it
// chose (testDemoDir without mounts) until the test ends.
func useDemoDir(t *testing.T) {
	old := demoDirName
	demoDirName = func(parent string) string { return parent + "/cloudmem-demo" }
	t.Cleanup(func() { demoDirName = old })
}

// demoOutput is the whole output of a demo in testDemoDir against an empty
// store named STORE.
func demoOutput(store string) string {
	return `cloudmem demo: a memory session against the store ` + store + `, in ` + testDemoDir + `
` + demoSession
}

const demoSession = `
> {"command":"view","path":"/memories"}
Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
0B	/memories

> {"command":"create","path":"/memories/cloudmem-demo/notes.md","file_text":"# Project notes\n- Build with Go 1.26\n- Tests: bash integration/run-tests.sh\n"}
File created successfully at: /memories/cloudmem-demo/notes.md

> {"command":"str_replace","path":"/memories/cloudmem-demo/notes.md","old_str":"Go 1.26","new_str":"Go 1.26 or newer"}
The memory file has been edited. Here is the snippet showing the change (with line numbers):
     1	# Project notes
     2	- Build with Go 1.26 or newer
     3	- Tests: bash integration/run-tests.sh
     4	

> {"command":"insert","path":"/memories/cloudmem-demo/notes.md","insert_line":1,"insert_text":"- Owner: the storage team\n"}
The file /memories/cloudmem-demo/notes.md has been edited.

> {"command":"view","path":"/memories/cloudmem-demo/notes.md"}
Here's the content of /memories/cloudmem-demo/notes.md with line numbers:
     1	# Project notes
     2	- Owner: the storage team
     3	- Build with Go 1.26 or newer
     4	- Tests: bash integration/run-tests.sh
     5	

> {"command":"rename","old_path":"/memories/cloudmem-demo/notes.md","new_path":"/memories/cloudmem-demo/project.md"}
Successfully renamed /memories/cloudmem-demo/notes.md to /memories/cloudmem-demo/project.md

> {"command":"view","path":"/memories"}
Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
111B	/memories
111B	/memories/cloudmem-demo/
111B	/memories/cloudmem-demo/project.md

> {"command":"delete","path":"/memories/cloudmem-demo"}
Successfully deleted /memories/cloudmem-demo

Done; the demo deleted what it created.
`

// TestDemoTwice runs the demo twice on one store: both runs succeed with
// the same whole output, and the store is left empty.
func TestDemoTwice(t *testing.T) {
	useDemoDir(t)
	store := "shared://" + storeName(t)
	want := demoOutput(store)
	for run := 1; run <= 2; run++ {
		code, stdout, stderr := cloudmem([]string{"--store", store, "demo"}, "", nil)
		if code != 0 || stdout != want || stderr != "" {
			t.Fatalf("demo run %d = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", run, code, stdout, stderr, want)
		}
	}
	infos, err := blob.ListAll(context.Background(), sharedStore(storeName(t)), "")
	infos = slices.DeleteFunc(infos, func(info blob.Info) bool { return isFileCount(info.Key) }) // the handler's own
	if err != nil || len(infos) != 0 {
		t.Errorf("after the demo the store holds %v, %v; want it empty", infos, err)
	}
}

// TestDemoTouchesOnlyItsOwn checks that the demo leaves alone what the
// store held before: a file in a directory named like the demo's is kept,
// the demo works in a new directory of its own and removes it, and a demo
// whose directory exists already refuses to run and changes nothing.
func TestDemoTouchesOnlyItsOwn(t *testing.T) {
	name := storeName(t)
	mine := map[string]string{"cloudmem-demo/mine.md": "my own notes"}
	store := seed(t, name, mine)
	code, stdout, stderr := cloudmem([]string{"--store", store, "demo"}, "", nil)
	if code != 0 || stderr != "" || !strings.HasSuffix(stdout, "Done; the demo deleted what it created.\n") {
		t.Fatalf("demo = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and a finished demo", code, stdout, stderr)
	}
	if got := contents(t, name); !equalMaps(got, mine) {
		t.Errorf("after the demo the store holds %q, want %q", got, mine)
	}

	useDemoDir(t) // the demo picks the directory that holds mine.md
	code, stdout, stderr = cloudmem([]string{"--store", store, "demo"}, "", nil)
	wantErr := "cloudmem demo: " + testDemoDir + " already exists in the store; the demo works only in a new directory\n"
	if code != 1 || stdout != "" || stderr != wantErr {
		t.Errorf("demo in an existing directory = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", code, stdout, stderr, wantErr)
	}
	if got := contents(t, name); !equalMaps(got, mine) {
		t.Errorf("after the refused demo the store holds %q, want %q", got, mine)
	}
}

// TestDemoDirName checks that each demo picks a fresh directory name.
func TestDemoDirName(t *testing.T) {
	a, b := demoDirName("/memories"), demoDirName("/memories")
	if a == b || !strings.HasPrefix(a, "/memories/cloudmem-demo-") || len(a) != len("/memories/cloudmem-demo-")+8 {
		t.Errorf("demo directories %q and %q; want two different /memories/cloudmem-demo-XXXXXXXX", a, b)
	}
}

// TestDemoFailure checks that a step with an error result stops the demo
// with exit 1.
func TestDemoFailure(t *testing.T) {
	useDemoDir(t)
	const store = "mem://?readonly=true"
	steps := demoSteps(testDemoDir)
	wantOut := `cloudmem demo: a memory session against the store ` + store + `, in ` + testDemoDir + `

> {"command":"view","path":"/memories"}
Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
0B	/memories

> ` + steps[1] + `
Error: The memory directory is read-only: create is not allowed
`
	wantErr := "cloudmem demo: the step " + steps[1] + " failed\n"
	code, stdout, stderr := cloudmem([]string{"--store", store, "demo"}, "", nil)
	if code != 1 || stdout != wantOut || stderr != wantErr {
		t.Errorf("demo = %d\nstdout:\n%s\nstderr:\n%s\nwant 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr, wantOut, wantErr)
	}
}

// TestDemoDirectory runs the demo twice against a local directory, the
// default kind of store: both runs succeed with the same whole output.
func TestDemoDirectory(t *testing.T) {
	useDemoDir(t)
	dir := t.TempDir()
	want := demoOutput(dir)
	for run := 1; run <= 2; run++ {
		code, stdout, stderr := cloudmem([]string{"demo"}, "", map[string]string{storeEnv: dir})
		if code != 0 || stdout != want || stderr != "" {
			t.Fatalf("demo run %d = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", run, code, stdout, stderr, want)
		}
	}
}

// TestMaskStore: what the demo prints of its store has every credential
// masked, a mount table's too (the password may come from a config file's
// ${VAR}, which must not reach stdout).
func TestMaskStore(t *testing.T) {
	for in, want := range map[string]string{
		"redis://user:secret@127.0.0.1:6379/0": "redis://user:***@127.0.0.1:6379/0",
		"s3://bucket/agent?region=eu-west-1":   "s3://bucket/agent?region=eu-west-1",
		"./memories":                           "./memories",
		"/tmp/a:b@c":                           "/tmp/a:b@c",
		"mounts:a=redis://:TOPSECRET@127.0.0.1:16399/0 b=./m:ro": "mounts:a=redis://:***@127.0.0.1:16399/0 b=./m:ro",
	} {
		if got := maskStore(in); got != want {
			t.Errorf("maskStore(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDemoUnderMounts checks that with --mount the demo works in the first
// writable mount (the top level outside every mount holds nothing), with
// the whole output, and leaves that mount's store empty.
func TestDemoUnderMounts(t *testing.T) {
	useDemoDir(t)
	team := "shared://" + storeName(t)
	args := []string{"--mount", "ro=mem://?readonly=true", "--mount", "team=" + team, "demo"}
	dir := "/memories/team/cloudmem-demo"
	want := `cloudmem demo: a memory session against the store mounts:ro=mem://?readonly=true team=` + team + `, in ` + dir + `

> {"command":"view","path":"/memories"}
Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
0B	/memories
0B	/memories/ro/
0B	/memories/team/

> {"command":"create","path":"` + dir + `/notes.md","file_text":"# Project notes\n- Build with Go 1.26\n- Tests: bash integration/run-tests.sh\n"}
File created successfully at: ` + dir + `/notes.md

> {"command":"str_replace","path":"` + dir + `/notes.md","old_str":"Go 1.26","new_str":"Go 1.26 or newer"}
The memory file has been edited. Here is the snippet showing the change (with line numbers):
     1	# Project notes
     2	- Build with Go 1.26 or newer
     3	- Tests: bash integration/run-tests.sh
     4	

> {"command":"insert","path":"` + dir + `/notes.md","insert_line":1,"insert_text":"- Owner: the storage team\n"}
The file ` + dir + `/notes.md has been edited.

> {"command":"view","path":"` + dir + `/notes.md"}
Here's the content of ` + dir + `/notes.md with line numbers:
     1	# Project notes
     2	- Owner: the storage team
     3	- Build with Go 1.26 or newer
     4	- Tests: bash integration/run-tests.sh
     5	

> {"command":"rename","old_path":"` + dir + `/notes.md","new_path":"` + dir + `/project.md"}
Successfully renamed ` + dir + `/notes.md to ` + dir + `/project.md

> {"command":"view","path":"/memories"}
Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
111B	/memories
0B	/memories/ro/
111B	/memories/team/
111B	/memories/team/cloudmem-demo/

> {"command":"delete","path":"` + dir + `"}
Successfully deleted ` + dir + `

Done; the demo deleted what it created.
`
	code, stdout, stderr := cloudmem(args, "", nil)
	if code != 0 || stdout != want || stderr != "" {
		t.Fatalf("demo = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
	if got := contents(t, storeName(t)); len(got) != 0 {
		t.Errorf("after the demo the mounted store holds %q, want nothing", got)
	}

	// With every mount read-only there is nowhere to work: one line, exit 1.
	code, stdout, stderr = cloudmem([]string{"--mount", "ro=mem://?readonly=true", "demo"}, "", nil)
	wantErr := "cloudmem demo: every mount is read-only; the demo needs a writable one\n"
	if code != 1 || stdout != "" || stderr != wantErr {
		t.Errorf("demo on read-only mounts = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", code, stdout, stderr, wantErr)
	}
}
