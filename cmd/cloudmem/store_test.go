package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBarePathParameters checks that a bare store path holding '?' or '#'
// is refused, naming the file: URL to use, and that nothing is created:
// storeurl takes a bare path literally, so "store?encrypt=age" would be a
// plain directory of that name.
func TestBarePathParameters(t *testing.T) {
	dir := t.TempDir()
	for _, store := range []string{
		filepath.Join(dir, "mystore?encrypt=age&age_identity_file=agent.key"),
		filepath.Join(dir, "x?readonly=true"),
		filepath.Join(dir, "notes#1"),
	} {
		want := "cloudmem put: the store path \"" + store + "\" holds '?' or '#': a plain path takes no parameters; " +
			"write the store as a URL, file:" + store + " (and escape a '?' or '#' that is part of the directory's name as %3F or %23)\n"
		code, stdout, stderr := cloudmem([]string{"put", "/memories/a.md", "--store", store}, "secret", nil)
		if code != 1 || stdout != "" || stderr != want {
			t.Errorf("put with --store %q = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", store, code, stdout, stderr, want)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the refused stores left %v, %v in %s; want nothing", entries, err, dir)
	}
}

// TestReadOnlyUseCreatesNothing runs every command that only reads on a
// directory that does not exist: each answers that the store does not
// exist, and the directory is still missing afterwards.
func TestReadOnlyUseCreatesNothing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "store")
	noStore := "the store does not exist: no directory " + missing + " (the first write creates it)\n"
	out := t.TempDir()
	for _, store := range []string{missing, "file:" + missing, "file://" + missing + "?readonly=true"} {
		for _, tc := range []cliCase{
			{args: []string{"ls"}, code: 1, stderr: "cloudmem ls: " + noStore},
			{args: []string{"ls", "--json"}, code: 1, stderr: "cloudmem ls: " + noStore},
			{args: []string{"view", "/memories"}, code: 1, stderr: "cloudmem view: " + noStore},
			{args: []string{"cat", "/memories/a.md"}, code: 1, stderr: "cloudmem cat: " + noStore},
			{args: []string{"export", "-"}, code: 1, stderr: "cloudmem export: " + noStore},
			{args: []string{"export", filepath.Join(out, "export")}, code: 1, stderr: "cloudmem export: " + noStore},
		} {
			code, stdout, stderr := cloudmem(append(tc.args, "--store", store), "", nil)
			if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("cloudmem %q --store %s = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s",
					tc.args, store, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
		}
		code, stdout, stderr := cloudmem([]string{"copy", store, "shared://" + storeName(t)}, "", nil)
		if want := "cloudmem copy: SRC: " + noStore; code != 1 || stdout != "" || stderr != want {
			t.Errorf("copy from %s = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", store, code, stdout, stderr, want)
		}
	}
	if _, err := os.Stat(filepath.Dir(filepath.Dir(missing))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after the reads, %s: %v; want it still missing", filepath.Dir(filepath.Dir(missing)), err)
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 0 {
		t.Errorf("export of a missing store left %v, %v; want nothing", entries, err)
	}
}

// TestCopyEmptySource checks that a copy from a store with no memory file
// (a directory that exists but holds nothing, or only bookkeeping) fails and
// says so, writing nothing.
func TestCopyEmptySource(t *testing.T) {
	empty := t.TempDir()
	bookkeeping := seed(t, storeName(t)+"-src", map[string]string{".cloudmem/journal": "the source's own"})
	dstName := storeName(t) + "-dst"
	for _, src := range []string{empty, bookkeeping} {
		code, stdout, stderr := cloudmem([]string{"copy", src, "shared://" + dstName}, "", nil)
		if want := "cloudmem copy: SRC holds no memory file: nothing to copy (check SRC_URL)\n"; code != 1 || stdout != "" || stderr != want {
			t.Errorf("copy from %s = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", src, code, stdout, stderr, want)
		}
	}
	if got := contents(t, dstName); len(got) != 0 {
		t.Errorf("DST holds %q, want nothing", got)
	}
}

// TestURLLimits: a store URL's max_files holds for the CLI's commands,
// whether its directory exists or the first write creates it, and on a
// mount; a bad value is refused with the whole storeurl text and creates
// nothing.
func TestURLLimits(t *testing.T) {
	const stdin = `{"command":"create","path":"/memories/a","file_text":""}
{"command":"create","path":"/memories/b","file_text":""}
`
	const want = `{"content":"File created successfully at: /memories/a","is_error":false}
{"content":"Error: The memory directory is full: it holds 1 files, the limit is 1. Delete or merge files first.","is_error":true}
`
	existing := t.TempDir()
	missing := filepath.Join(t.TempDir(), "new")
	for _, store := range []string{"file://" + existing + "?max_files=1", "file://" + missing + "?max_files=1"} {
		code, stdout, stderr := cloudmem([]string{"--store", store, "exec"}, stdin, nil)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("exec on %s = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", store, code, stdout, stderr, want)
		}
	}
	mounted := `{"command":"create","path":"/memories/me/a","file_text":""}
{"command":"create","path":"/memories/me/b","file_text":""}
`
	wantMounted := `{"content":"File created successfully at: /memories/me/a","is_error":false}
{"content":"Error: The memory directory is full: it holds 1 files, the limit is 1. Delete or merge files first.","is_error":true}
`
	code, stdout, stderr := cloudmem([]string{"--mount", "me=file://" + t.TempDir() + "?max_files=1", "exec"}, mounted, nil)
	if code != 0 || stdout != wantMounted || stderr != "" {
		t.Errorf("exec on a mount = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, wantMounted)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	code, stdout, stderr = cloudmem([]string{"--store", "file://" + bad + "?max_files=0", "exec"}, stdin, nil)
	const wantBad = "cloudmem exec: storeurl: max_files=\"0\": want a whole number from 1 to 1000000000, or off\n"
	if code != 1 || stdout != "" || stderr != wantBad {
		t.Errorf("exec with max_files=0 = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", code, stdout, stderr, wantBad)
	}
	if _, err := os.Stat(bad); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused URL left %s (%v)", bad, err)
	}
}

// TestDryRunRenameLikeTheRealOne: on a store that renames atomically (the
// file store) a directory holding a file over the read limit moves, and
// its dry run says so instead of refusing what the real run does.
func TestDryRunRenameLikeTheRealOne(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "big.bin"), make([]byte, 6<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mv", "--dry-run", "d", "e"}, "would rename /memories/d to /memories/e\n"},
		{[]string{"mv", "d", "e"}, "Successfully renamed /memories/d to /memories/e\n"},
	} {
		code, stdout, stderr := cloudmem(append(tc.args, "--store", dir), "", nil)
		if code != 0 || stdout != tc.want || stderr != "" {
			t.Errorf("%q = %d\nstdout: %q\nstderr: %q\nwant 0 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "e", "big.bin")); err != nil {
		t.Errorf("after mv: %v", err)
	}
}

// secrets= works on a store URL (one that exists and one the first write
// creates) and on a mount (docs/spec.md "Write policies").
func TestURLSecrets(t *testing.T) {
	const stdin = `{"command":"create","path":"/memories/a","file_text":"k AKIAZ3MSJV4WWNKWW5FG"}
`
	const want = `{"content":"Error: The content for /memories/a holds a secret (aws-access-token on line 1); nothing was written. Memory files keep no secrets: write where a secret is kept (a vault path, an environment variable's name) instead of the secret itself.","is_error":true}
`
	existing := t.TempDir()
	missing := filepath.Join(t.TempDir(), "new")
	for _, store := range []string{"file://" + existing + "?secrets=reject", "file://" + missing + "?secrets=reject"} {
		code, stdout, stderr := cloudmem([]string{"--store", store, "exec"}, stdin, nil)
		if code != 0 || stdout != want || stderr != "" {
			t.Errorf("exec on %s = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", store, code, stdout, stderr, want)
		}
	}
	mounted := strings.ReplaceAll(stdin, "/memories/a", "/memories/me/a")
	wantMounted := `{"content":"File created successfully at: /memories/me/a\nNote: a secret was replaced by [REDACTED:aws-access-token] on line 1. Memory files keep no secrets: write where a secret is kept (a vault path, an environment variable's name) instead of the secret itself.","is_error":false}
`
	dir := t.TempDir()
	code, stdout, stderr := cloudmem([]string{"--mount", "me=file://" + dir + "?secrets=redact", "exec"}, mounted, nil)
	if code != 0 || stdout != wantMounted || stderr != "" {
		t.Errorf("exec on a mount = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, wantMounted)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "a")); err != nil || string(got) != "k [REDACTED:aws-access-token]" {
		t.Errorf("the mount's file holds %q, %v", got, err)
	}
	code, stdout, stderr = cloudmem([]string{"--store", "file://" + existing + "?secrets=loud", "exec"}, stdin, nil)
	if wantBad := "cloudmem exec: storeurl: secrets=\"loud\": want off, warn, redact or reject\n"; code != 1 || stdout != "" || stderr != wantBad {
		t.Errorf("exec with secrets=loud = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", code, stdout, stderr, wantBad)
	}
}
