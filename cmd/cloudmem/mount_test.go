package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// --mount places several stores in one /memories: a read-only team store
// (":ro"), one made read-only by its URL (readonly=true), and a writable one.
func TestMountFlag(t *testing.T) {
	name := storeName(t)
	team, docs, me := sharedStore(name+"-team"), sharedStore(name+"-docs"), sharedStore(name+"-me")
	for s, key := range map[blob.Store]string{team: "style.md", docs: "api.md"} {
		if _, err := s.Put(t.Context(), key, []byte("Use tabs.\n"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	stdin := strings.Join([]string{
		`{"command":"view","path":"/memories"}`,
		`{"command":"create","path":"/memories/team/new.md","file_text":"x"}`,
		`{"command":"delete","path":"/memories/docs/api.md"}`,
		`{"command":"create","path":"/memories/me/todo.md","file_text":"- milk\n"}`,
		`{"command":"rename","old_path":"/memories/me/todo.md","new_path":"/memories/team/todo.md"}`,
		`{"command":"create","path":"/memories/todo.md","file_text":"x"}`,
		`{"command":"delete","path":"/memories/me"}`,
	}, "\n")
	want := `{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n20B\t/memories\n10B\t/memories/docs/\n10B\t/memories/docs/api.md\n0B\t/memories/me/\n10B\t/memories/team/\n10B\t/memories/team/style.md","is_error":false}
{"content":"Error: The memory directory is read-only: create is not allowed","is_error":true}
{"content":"Error: The memory directory is read-only: delete is not allowed","is_error":true}
{"content":"File created successfully at: /memories/me/todo.md","is_error":false}
{"content":"Error: Cannot move /memories/me/todo.md to /memories/team/todo.md: the mount point /memories/team is read-only","is_error":true}
{"content":"Error: The path /memories/todo.md is outside every mount point. Use a path inside one of: /memories/docs, /memories/me, /memories/team","is_error":true}
{"content":"Error: Cannot delete the mount point /memories/me","is_error":true}
`
	args := []string{"--mount", "team=shared://" + name + "-team:ro", "--mount", "docs=shared://" + name + "-docs?readonly=true",
		"--mount", "me=shared://" + name + "-me", "exec"}
	code, stdout, stderr := cloudmem(args, stdin, nil)
	if code != 0 || stdout != want || stderr != "" {
		t.Errorf("exec = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
	if _, err := me.Stat(t.Context(), "todo.md"); err != nil {
		t.Errorf("the writable mount's store: %v", err)
	}
	if keys, _ := blob.ListAll(t.Context(), team, ""); len(keys) != 1 {
		t.Errorf("the read-only mount's store holds %v", keys)
	}
}

// Bad --mount values are usage errors that name the problem.
func TestMountFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--mount", "team", "view", "/memories"}, `cloudmem view: --mount "team": want NAME=URL`},
		{[]string{"--mount", "team=", "view", "/memories"}, `cloudmem view: --mount "team=": want NAME=URL`},
		{[]string{"--mount", "team=:ro", "view", "/memories"}, `cloudmem view: --mount "team=:ro": want NAME=URL`},
		{[]string{"--mount", ".team=mem://", "view", "/memories"}, `cloudmem view: --mount ".team=mem://": mount name ".team" starts with '.', which listings hide`},
		{[]string{"--mount", "a/b=mem://", "view", "/memories"}, `cloudmem view: --mount "a/b=mem://": mount name "a/b" has a '/': a mount name is one path segment`},
		{[]string{"--mount", "a=mem://", "--mount", "a=mem://", "view", "/memories"}, `cloudmem view: --mount: mount name "a" is used twice`},
		{[]string{"--store", "mem://", "--mount", "a=mem://", "view", "/memories"}, `cloudmem view: --store and --mount cannot be used together: put the store under a --mount too`},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", nil)
		if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || stdout != "" || first != tc.want {
			t.Errorf("%q = %d, stdout %q, stderr %q; want %d and first line %q", tc.args, code, stdout, stderr, exitUsage, tc.want)
		}
	}
}

// A mount whose store cannot be opened fails the command, naming the mount.
func TestMountOpenFails(t *testing.T) {
	missing := t.TempDir() + "/missing"
	code, stdout, stderr := cloudmem([]string{"--mount", "a=mem://", "--mount", "b=" + missing, "view", "/memories"}, "", nil)
	if want := "cloudmem view: mount b: the store does not exist: no directory " + missing + " (the first write creates it)\n"; code != exitFail || stdout != "" || stderr != want {
		t.Errorf("view = %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, exitFail, want)
	}
}

// rekey works on one store: a mount table is refused, whole.
func TestMountRekeyRefused(t *testing.T) {
	code, stdout, stderr := cloudmem([]string{"--mount", "a=mem://", "rekey", "--to-recipients",
		"age18z7982fn2z5npan5a8f96zrsurel22kdv2zduj2sdw6fthqmg9psdsk4l7"}, "", nil)
	want := "cloudmem rekey: rekey works on one store: give it with --store, not --mount"
	if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || stdout != "" || first != want {
		t.Errorf("rekey = %d, stdout %q, stderr %q; want %d and first line %q", code, stdout, stderr, exitUsage, want)
	}
}

// A sync's default state file is one per folder and store: another set of
// mounts is another store, and so is a mount table beside the default
// store.
func TestMountSyncState(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	state := func(mounts ...string) string {
		a := &app{getenv: func(k string) string { return env[k] }, mounts: mounts}
		p, err := a.syncStatePath("/notes")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	paths := map[string]bool{}
	for _, p := range []string{state(), state("a=mem://"), state("a=mem://:ro"), state("a=mem://", "b=mem://")} {
		paths[p] = true
	}
	if len(paths) != 4 {
		t.Errorf("state files %v: want 4 different", paths)
	}
	if state("a=mem://") != state("a=mem://") {
		t.Error("the same mounts give two state files")
	}
}

// Mounts whose stores overlap (one place, or one inside the other) are
// refused before any store opens, with one line naming the two mounts
// (docs/spec.md "--mount"), and nothing is written; a config store's name
// is compared by its URLs.
func TestMountOverlapRefused(t *testing.T) {
	dir := t.TempDir()
	m := dir + "/m"
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("stores:\n  work: "+m+"\n  team:\n    mounts:\n      x: "+dir+"/x\n      y: "+m+"/y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLOUDMEM_CONFIG": cfg}
	const advice = "a write through one would change the files of the other; give each a directory or prefix of its own"
	inside := func(inner, outer string) string {
		return `cloudmem exec: mount "` + inner + `" lies inside mount "` + outer + `": ` + advice + "\n"
	}
	one := `cloudmem exec: mounts "a" and "b" are one store: ` + advice + "\n"
	for _, tc := range []struct {
		mounts []string
		want   string
	}{
		{[]string{"a=" + m, "b=" + m + "/b"}, inside("b", "a")},
		{[]string{"a=" + m + "/b/", "b=" + m}, inside("a", "b")},
		{[]string{"a=" + m, "b=file://" + m + "/?readonly=true"}, one},
		{[]string{"a=" + m + "/x/..", "b=" + m + "/:ro"}, one},
		{[]string{"a=" + m, "b=file:" + dir + "?prefix=m/b"}, inside("b", "a")},
		{[]string{"c=mem://", "a=" + m + "/b", "d=" + dir + "/mb", "b=" + dir}, inside("a", "b")},
		{[]string{"a=s3://kb?prefix=p", "b=s3://kb/p/q"}, inside("b", "a")},
		{[]string{"a=gs://kb/p?endpoint=http://127.0.0.1:4443/", "b=gs://kb/p?endpoint=HTTP://127.0.0.1:4443"}, one},
		{[]string{"a=redis://127.0.0.1:6379/0", "b=redis://127.0.0.1?prefix=cloudmem"}, one},
		{[]string{"a=work", "b=" + m + "/b"}, inside("b", "a")},
		{[]string{"a=team", "b=" + m}, inside("a", "b")},
	} {
		var args []string
		for _, v := range tc.mounts {
			args = append(args, "--mount", v)
		}
		args = append(args, "exec")
		code, stdout, stderr := cloudmem(args, `{"command":"create","path":"/memories/a/new.md","file_text":"x"}`, env)
		if code != exitFail || stdout != "" || stderr != tc.want {
			t.Errorf("%q = %d\nstdout %q\nstderr %q\nwant %d, no stdout and stderr %q", tc.mounts, code, stdout, stderr, exitFail, tc.want)
		}
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Fatalf("%q: the directory holds %v (%v); want nothing written", tc.mounts, entries, err)
		}
	}
}

// Stores side by side are no overlap: DIR/a and DIR/ab, two mem:// stores,
// two Redis prefixes one beneath the other (each its own namespace).
func TestMountNoOverlap(t *testing.T) {
	dir := t.TempDir()
	stdin := `{"command":"create","path":"/memories/a/x.md","file_text":"x"}
{"command":"create","path":"/memories/b/y.md","file_text":"y"}
`
	want := `{"content":"File created successfully at: /memories/a/x.md","is_error":false}
{"content":"File created successfully at: /memories/b/y.md","is_error":false}
`
	for _, mounts := range [][]string{
		{"a=" + dir + "/a", "b=" + dir + "/ab"},
		{"a=file:" + dir + "?prefix=p/a", "b=file:" + dir + "?prefix=p/ab"},
		{"a=mem://", "b=mem://"},
	} {
		code, stdout, stderr := cloudmem([]string{"--mount", mounts[0], "--mount", mounts[1], "exec"}, stdin, nil)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("%q = %d\nstdout %q\nstderr %q\nwant 0 and stdout %q", mounts, code, stdout, stderr, want)
		}
	}
	// The same name twice is mount.New's error, whether or not the stores overlap.
	code, stdout, stderr := cloudmem([]string{"--mount", "a=" + dir + "/a", "--mount", "a=" + dir + "/a", "view", "/memories"}, "", nil)
	if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || stdout != "" || first != `cloudmem view: --mount: mount name "a" is used twice` {
		t.Errorf("a name twice = %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
