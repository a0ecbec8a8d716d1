package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// expire deletes what the store's expiry rules made expire, and prints
// each; --dry-run only prints.
func TestExpireCommand(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("expire:\n  - path: /memories/scratch/**\n    after: 7d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-8 * 24 * time.Hour)
	for name, content := range map[string]string{"scratch/a.md": "a", "scratch/d/b.md": "b", "scratch/new.md": "n", "keep.md": "k"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if name != "scratch/new.md" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	store := "file:" + dir + "?policy=" + pol
	runCases(t, store, []cliCase{
		{args: []string{"cat", "scratch/a.md"}, code: 1,
			stderr: "cloudmem cat: The path /memories/scratch/a.md does not exist\n"},
		{args: []string{"expire", "--dry-run"}, stdout: "would expire /memories/scratch/a.md\nwould expire /memories/scratch/d/b.md\n"},
		{args: []string{"expire", "--dry-run"}, stdout: "would expire /memories/scratch/a.md\nwould expire /memories/scratch/d/b.md\n"},
		{args: []string{"expire"}, stdout: "expired /memories/scratch/a.md\nexpired /memories/scratch/d/b.md\n"},
		{args: []string{"expire"}},
		{args: []string{"cat", "scratch/new.md"}, stdout: "n"},
		{args: []string{"expire", "now"}, code: 2,
			stderr: "cloudmem expire: unexpected argument \"now\"\nUsage: cloudmem expire [--dry-run]\nRun 'cloudmem expire --help' for more.\n"},
	})
	for _, name := range []string{"scratch/a.md", "scratch/d/b.md"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still there: %v", name, err)
		}
	}
	// Each mount by its own rules, with the table's paths.
	old2 := filepath.Join(dir, "scratch", "late.md")
	if err := os.WriteFile(old2, []byte("l"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(old2, old, old); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []cliCase{
		{args: []string{"--mount", "team=" + store, "--mount", "other=file:" + t.TempDir(), "expire", "--dry-run"},
			stdout: "would expire /memories/team/scratch/late.md\n"},
		{args: []string{"--mount", "team=" + store, "expire"}, stdout: "expired /memories/team/scratch/late.md\n"},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d, %q, %q; want %d, %q, %q", tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
	runCases(t, "file:"+dir, []cliCase{{args: []string{"expire"}, code: 1,
		stderr: "cloudmem expire: the store has no expiry rules: name a policy file with expire rules in its URL (policy=PATH), or in a mount's\n"}})
}

// A restore onto a file that expired leaves a history with no unrecorded
// change: the store's write policy sits above its history (openWithHistory),
// so the restore writes over the expired version it read, and is recorded
// as a change of that version.
func TestRestoreOverExpiredFile(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("expire:\n  - path: /memories/scratch/**\n    after: 7d\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store := "file:" + dir + "?history=on&policy=" + pol
	run := func(stdin string, args ...string) string {
		t.Helper()
		code, out, errOut := cloudmem(append([]string{"--store", store}, args...), stdin, nil)
		if code != 0 || errOut != "" {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errOut)
		}
		return out
	}
	run(`{"command":"create","path":"/memories/scratch/a.md","file_text":"one\n"}`+"\n"+
		`{"command":"str_replace","path":"/memories/scratch/a.md","old_str":"one","new_str":"two"}`+"\n", "exec", "--actor", "ann")
	versions := func() []versionJSON {
		var vs []versionJSON
		if err := json.Unmarshal([]byte(run("", "history", "--json", "scratch/a.md")), &vs); err != nil {
			t.Fatal(err)
		}
		return vs
	}
	first := versions()[0].Version
	old := time.Now().Add(-8 * 24 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "scratch", "a.md"), old, old); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := cloudmem([]string{"--store", store, "cat", "scratch/a.md"}, "", nil)
	if want := "cloudmem cat: The path /memories/scratch/a.md does not exist\n"; code != 1 || errOut != want {
		t.Fatalf("cat of the expired file: exit %d, stderr %q, want %q", code, errOut, want)
	}
	if out := run("", "restore", "--actor", "ann", "scratch/a.md@"+first); !strings.HasPrefix(out, "Restored /memories/scratch/a.md to version "+first+": new version ") {
		t.Fatalf("restore: %q", out)
	}
	if out := run("", "cat", "scratch/a.md"); out != "one\n" {
		t.Fatalf("cat after the restore: %q", out)
	}
	var got []string
	for _, v := range versions() {
		got = append(got, fmt.Sprintf("%s by %s, from %q, current %v", v.Operation, v.Actor, v.RestoredFrom, v.Current))
	}
	want := []string{
		`created by ann, from "", current false`,
		`modified by ann, from "", current false`,
		fmt.Sprintf(`modified by ann, from %q, current true`, first),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history after the restore:\n%q\nwant\n%q", got, want)
	}
}
