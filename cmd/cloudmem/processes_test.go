package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// processArgs, when set in a child's environment, makes the test binary
// run the CLI itself on those arguments (separated by U+001F) instead of the
// tests, so it can stand in for the cloudmem binary in TestTwoProcessesLoseNoEdit.
const processArgs = "CLOUDMEM_TEST_CLI_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(processArgs); ok {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}

// TestTwoProcessesLoseNoEdit runs two cloudmem exec processes on one
// local-directory store at once, each inserting its own 100 lines at the top
// of the same file, one command at a time. The file store's cross-process
// lock and the handler's compare-and-swap retries must keep all 200 lines:
// every command succeeds, and every line is there exactly once.
func TestTwoProcessesLoseNoEdit(t *testing.T) {
	const perProcess = 100
	dir := t.TempDir()
	code, out, errOut := cloudmem([]string{"--store", dir, "exec"},
		`{"command":"create","path":"/memories/log.md","file_text":""}`+"\n", nil)
	if code != 0 || out != `{"content":"File created successfully at: /memories/log.md","is_error":false}`+"\n" {
		t.Fatalf("create: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	for p := range 2 {
		var stdin strings.Builder
		for i := range perProcess {
			fmt.Fprintf(&stdin, `{"command":"insert","path":"/memories/log.md","insert_line":0,"insert_text":"p%d-%03d"}`+"\n", p, i)
		}
		cmd := exec.CommandContext(t.Context(), os.Args[0])
		cmd.Env = append(os.Environ(), processArgs+"="+strings.Join([]string{"--store", dir, "exec"}, "\x1f"))
		cmd.Stdin = strings.NewReader(stdin.String())
		cmd.Stdout = &outs[p]
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		wg.Go(func() {
			if err := cmd.Run(); err != nil {
				errs[p] = fmt.Errorf("process %d: %v; stderr: %s", p, err, stderr.String())
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	wantLine := `{"content":"The file /memories/log.md has been edited.","is_error":false}`
	for p, out := range outs {
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) != perProcess {
			t.Fatalf("process %d wrote %d result lines, want %d", p, len(lines), perProcess)
		}
		for i, line := range lines {
			if line != wantLine {
				t.Fatalf("process %d, command %d: %s, want %s", p, i, line, wantLine)
			}
		}
	}

	content, err := os.ReadFile(filepath.Join(dir, "log.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(content), "\n"), "\n")
	var want []string
	for p := range 2 {
		for i := range perProcess {
			want = append(want, fmt.Sprintf("p%d-%03d", p, i))
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("the file holds %d lines, want each of the %d inserted exactly once (first difference near %q)",
			len(got), len(want), firstMismatch(got, want))
	}
}

func firstMismatch(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return got[i]
		}
	}
	return "the end"
}
