package main

import (
	"os"
	"path/filepath"
	"testing"
)

func writeTestFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSyncTwoFolders(t *testing.T) {
	store := "shared://" + storeName(t)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	laptop, desktop := t.TempDir(), t.TempDir()
	writeTestFile(t, laptop, "MEMORY.md", "- likes tea\n")
	writeTestFile(t, laptop, "notes/a.md", "a\n")

	code, out, errOut := cloudmem([]string{"sync", laptop, "--store", store, "--machine", "laptop"}, "", env)
	want := "upload        MEMORY.md\nupload        notes/a.md\n" +
		"sync: 2 files, 2 uploaded, 0 downloaded, 0 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("laptop's sync: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
	// A dry run on the desktop says what it would do and does nothing.
	code, out, errOut = cloudmem([]string{"--store", store, "sync", "--dry-run", desktop}, "", env)
	want = "download      MEMORY.md\ndownload      notes/a.md\n" +
		"sync (dry run, nothing changed): 2 files, 0 uploaded, 2 downloaded, 0 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("dry run: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
	if entries, _ := os.ReadDir(desktop); len(entries) != 0 {
		t.Fatalf("the dry run wrote %d entries into the folder", len(entries))
	}
	code, _, errOut = cloudmem([]string{"--store", store, "sync", desktop, "--machine", "desktop"}, "", env)
	if code != 0 {
		t.Fatalf("desktop's sync: exit %d, stderr %s", code, errOut)
	}

	// Both edit MEMORY.md: the second to sync keeps its content under a conflict name and exits 1.
	writeTestFile(t, laptop, "MEMORY.md", "- likes tea\n- laptop\n")
	writeTestFile(t, desktop, "MEMORY.md", "- likes tea\n- desktop\n")
	if code, _, errOut := cloudmem([]string{"--store", store, "sync", laptop, "--machine", "laptop"}, "", env); code != 0 {
		t.Fatalf("laptop's second sync: exit %d, stderr %s", code, errOut)
	}
	code, out, errOut = cloudmem([]string{"--store", store, "sync", desktop, "--machine", "desktop"}, "", env)
	want = "conflict      MEMORY.md (this machine's content kept as MEMORY.conflict-desktop-8ca6cc60.md)\n" +
		"sync: 2 files, 0 uploaded, 0 downloaded, 0 deleted in the store, 0 deleted here, 1 conflict, 0 deletes deferred, 0 skipped, 0 failed\n"
	wantErr := "cloudmem sync: dirsync: files changed on both sides were kept under conflict names (1 file)\n"
	if code != 1 || out != want || errOut != wantErr {
		t.Fatalf("conflicting sync: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s\nwant:\n%s", code, out, want, errOut, wantErr)
	}
	data, err := os.ReadFile(filepath.Join(desktop, "MEMORY.conflict-desktop-8ca6cc60.md"))
	if err != nil || string(data) != "- likes tea\n- desktop\n" {
		t.Fatalf("the desktop's content under the conflict name: %q, %v", data, err)
	}
}

func TestSyncUsage(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	code, _, errOut := cloudmem([]string{"--store", "shared://" + storeName(t), "sync", dir, "--watch", "--dry-run"}, "", env)
	want := "cloudmem sync: --watch and --dry-run do not go together\nUsage: cloudmem sync DIR\nRun 'cloudmem sync --help' for more.\n"
	if code != 2 || errOut != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
	code, _, errOut = cloudmem([]string{"sync", filepath.Join(dir, "missing")}, "", env)
	if code != 2 || errOut != "cloudmem sync: "+filepath.Join(dir, "missing")+" is not a directory\nUsage: cloudmem sync DIR\nRun 'cloudmem sync --help' for more.\n" {
		t.Fatalf("a missing folder: exit %d, stderr:\n%s", code, errOut)
	}
}

// TestSyncOneOffDeletesAtOnce deletes a synced file and runs one pass
// without --watch: the delete reaches the store in that pass (the --grace
// default is for --watch), and the state file given inside the folder is
// refused.
func TestSyncOneOffDeletesAtOnce(t *testing.T) {
	store := "shared://" + storeName(t)
	env := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	dir := t.TempDir()
	writeTestFile(t, dir, "a.md", "a\n")
	writeTestFile(t, dir, "b.md", "b\n")
	if code, _, errOut := cloudmem([]string{"--store", store, "sync", dir}, "", env); code != 0 {
		t.Fatalf("first sync: exit %d, stderr %s", code, errOut)
	}
	if err := os.Remove(filepath.Join(dir, "a.md")); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cloudmem([]string{"--store", store, "sync", dir}, "", env)
	want := "delete-remote a.md\n" +
		"sync: 2 files, 0 uploaded, 0 downloaded, 1 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed\n"
	if code != 0 || out != want || errOut != "" {
		t.Fatalf("second sync: exit %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, out, want, errOut)
	}
	state := filepath.Join(dir, "state.json")
	code, out, errOut = cloudmem([]string{"--store", store, "sync", dir, "--state", state}, "", env)
	wantErr := "cloudmem sync: dirsync: the sync state is inside the synced folder: the state file " + state + " is in the folder " + dir +
		", and would be synced to the store; nothing was changed: give a state file outside the folder\n"
	if code != 1 || errOut != wantErr {
		t.Fatalf("--state inside the folder: exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", code, out, errOut, wantErr)
	}
}
