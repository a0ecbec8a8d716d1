package main

import (
	"context"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// demoOutput is the whole output of a demo against an empty store named
// STORE.
func demoOutput(store string) string {
	return `cloudmem demo: a memory session against the store ` + store + `
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
	store := "shared://" + storeName(t)
	want := demoOutput(store)
	for run := 1; run <= 2; run++ {
		code, stdout, stderr := cloudmem([]string{"--store", store, "demo"}, "", nil)
		if code != 0 || stdout != want || stderr != "" {
			t.Fatalf("demo run %d = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", run, code, stdout, stderr, want)
		}
	}
	if infos, err := blob.ListAll(context.Background(), sharedStore(storeName(t)), ""); err != nil || len(infos) != 0 {
		t.Errorf("after the demo the store holds %v, %v; want it empty", infos, err)
	}
}

// TestDemoLeftover checks that a demo directory left by an interrupted run
// is deleted first, visibly, and that the demo then runs as usual.
func TestDemoLeftover(t *testing.T) {
	name := storeName(t)
	if _, err := sharedStore(name).Put(context.Background(), "cloudmem-demo/notes.md", []byte("half done"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	store := "shared://" + name
	want := `cloudmem demo: a memory session against the store ` + store + `

(/memories/cloudmem-demo is left from an earlier run that did not finish; deleting it first)

> {"command":"delete","path":"/memories/cloudmem-demo"}
Successfully deleted /memories/cloudmem-demo
` + demoSession
	code, stdout, stderr := cloudmem([]string{"--store", store, "demo"}, "", nil)
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("demo = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
}

// TestDemoFailure checks that a step with an error result stops the demo
// with exit 1.
func TestDemoFailure(t *testing.T) {
	const store = "mem://?readonly=true"
	wantOut := `cloudmem demo: a memory session against the store ` + store + `

> {"command":"view","path":"/memories"}
Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
0B	/memories

> ` + demoSteps[1] + `
Error: The memory directory is read-only: create is not allowed
`
	wantErr := "cloudmem demo: the step " + demoSteps[1] + " failed\n"
	code, stdout, stderr := cloudmem([]string{"--store", store, "demo"}, "", nil)
	if code != 1 || stdout != wantOut || stderr != wantErr {
		t.Errorf("demo = %d\nstdout:\n%s\nstderr:\n%s\nwant 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr, wantOut, wantErr)
	}
}

// TestDemoDirectory runs the demo twice against a local directory, the
// default kind of store: both runs succeed with the same whole output.
func TestDemoDirectory(t *testing.T) {
	dir := t.TempDir()
	want := demoOutput(dir)
	for run := 1; run <= 2; run++ {
		code, stdout, stderr := cloudmem([]string{"demo"}, "", map[string]string{storeEnv: dir})
		if code != 0 || stdout != want || stderr != "" {
			t.Fatalf("demo run %d = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", run, code, stdout, stderr, want)
		}
	}
}
