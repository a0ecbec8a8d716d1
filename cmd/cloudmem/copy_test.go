package main

import (
	"archive/tar"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/storeurl"
)

// manyFiles returns n files spread over nested directories, each with its
// own content (some empty, some binary, some over 64 KiB).
func manyFiles(n int) map[string]string {
	files := make(map[string]string, n)
	for i := range n {
		key := fmt.Sprintf("agent-%d/topic-%02d/note-%04d.md", i%7, i%23, i)
		content := fmt.Sprintf("note %d\n%s", i, strings.Repeat("x", i%300))
		switch {
		case i%500 == 0:
			content = ""
		case i%333 == 0:
			content = string([]byte{0, 0xff, byte(i), '\n'})
		case i == 1234:
			content = strings.Repeat("big ", 20_000)
		}
		files[key] = content
	}
	return files
}

// TestCopyRoundTrip copies a store of 2,000 files from memory to a local
// directory and back: every file arrives with its bytes, the bookkeeping
// stays behind, and a second copy skips everything.
func TestCopyRoundTrip(t *testing.T) {
	files := manyFiles(2000)
	srcFiles := maps(files, map[string]string{".cloudmem/journal": "the source's own"})
	src := seed(t, storeName(t)+"-src", srcFiles)
	dir := t.TempDir()
	backName := storeName(t) + "-back"
	back := "shared://" + backName
	const fresh = "copied 2000 files, skipped 0 that DST already held\nverified 2000 files: every SHA-256 is equal\n"
	const again = "copied 0 files, skipped 2000 that DST already held\nverified 2000 files: every SHA-256 is equal\n"
	for _, tc := range []cliCase{
		{args: []string{"copy", src, dir}, stdout: fresh},
		{args: []string{"copy", src, dir}, stdout: again},
		{args: []string{"copy", dir, back, "--jobs", "3"}, stdout: fresh},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Fatalf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s", tc.args, code, stdout, stderr, tc.code, tc.stdout)
		}
	}
	got := contents(t, backName)
	if len(got) != len(files) {
		t.Errorf("the copy holds %d files, want %d", len(got), len(files))
	}
	for key, content := range files {
		if sha256.Sum256([]byte(got[key])) != sha256.Sum256([]byte(content)) {
			t.Errorf("%s: the copy differs from the original", key)
		}
	}
}

// maps merges maps into a new one.
func maps(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestCopyClashes checks files DST holds already: with other content they
// are named and the copy fails, unless --overwrite; files only DST holds
// are left alone and counted.
func TestCopyClashes(t *testing.T) {
	src := seed(t, storeName(t)+"-src", map[string]string{"a.md": "new", "b.md": "b", "c.md": "c"})
	dstName := storeName(t) + "-dst"
	dst := seed(t, dstName, map[string]string{"a.md": "old", "c.md": "c", "only-in-dst.md": "mine"})
	for _, tc := range []cliCase{
		{args: []string{"copy", src, dst}, code: 1, stdout: "", stderr: `cloudmem copy: a.md: the destination holds other content (--overwrite replaces it)
cloudmem copy: 1 of 3 files were not copied (1 copied, 1 skipped)
`},
		{args: []string{"copy", "--overwrite", src, dst},
			stdout: "copied 1 file, skipped 2 that DST already held\nverified 3 files: every SHA-256 is equal (DST also holds 1 file that SRC does not)\n"},
		{args: []string{"copy", "mem://?readonly=maybe", dst}, code: 1,
			stderr: "cloudmem copy: SRC: storeurl: readonly=\"maybe\": want true, false, 1 or 0\n"},
		{args: []string{"copy", src, "nosuch://x"}, code: 1,
			stderr: "cloudmem copy: DST: storeurl: unknown scheme \"nosuch\" (registered: " + strings.Join(storeurl.Schemes(), ", ") + ")\n"},
		{args: []string{"copy", "--jobs", "1", src, "mem://?readonly=1"}, code: 1,
			stderr: "cloudmem copy: DST: writing a.md: The memory directory is read-only: write is not allowed (0 files copied; run copy again to finish)\n"},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
	want := map[string]string{"a.md": "new", "b.md": "b", "c.md": "c", "only-in-dst.md": "mine"}
	if got := contents(t, dstName); !equalMaps(got, want) {
		t.Errorf("DST holds %q, want %q", got, want)
	}
}

// TestCopyFileAndDirectory copies a store holding both "a" and "a/b" into
// a local directory, which cannot: the second is named as not copied.
func TestCopyFileAndDirectory(t *testing.T) {
	src := seed(t, storeName(t), map[string]string{"a": "file", "a/b": "beneath"})
	code, stdout, stderr := cloudmem([]string{"copy", "--jobs", "1", src, t.TempDir()}, "", nil)
	want := `cloudmem copy: a/b: the destination has a file at an ancestor: The path /memories/a is a file, not a directory
cloudmem copy: 1 of 2 files were not copied (1 copied, 0 skipped)
`
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("copy = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", code, stdout, stderr, want)
	}
}

func TestProgressLine(t *testing.T) {
	var b strings.Builder
	p := &progressLine{w: &b}
	p.show(false, "copy: %d/%d", 1, 2000)
	p.show(false, "copy: %d/%d", 2, 2000) // within progressInterval: dropped
	p.show(true, "copy: %d/%d", 2000, 2000)
	p.show(true, "done")
	p.end()
	p.end() // no line shown: nothing to end
	want := "\rcopy: 1/2000\rcopy: 2000/2000\rdone           \n"
	if b.String() != want {
		t.Errorf("progress output %q, want %q", b.String(), want)
	}
	var quiet progressLine // not a terminal
	quiet.show(true, "x")
	quiet.end()

	a := &app{stderr: &b}
	if p := a.progress(); p.w != nil {
		t.Error("a progress line on a strings.Builder, which is no terminal")
	}
}

// TestEncryptedStore runs the commands over a directory store opened with
// encrypt=age and a key from keygen: the memory commands see plaintext, the
// directory holds ciphertext, and copy moves a store in and out of
// encryption with every SHA-256 equal, leaving the key object behind.
func TestEncryptedStore(t *testing.T) {
	keys, dir := t.TempDir(), t.TempDir()
	key, _ := newKey(t, keys, "id.txt")
	enc := "file://" + dir + "?encrypt=age&age_identity_file=" + key
	const secret = "launch at dawn\n"
	runCases(t, enc, []cliCase{
		{args: []string{"put", "/memories/plan.md"}, stdin: secret, stdout: "File created successfully at: /memories/plan.md\n"},
		{args: []string{"cat", "/memories/plan.md"}, stdout: secret},
		{args: []string{"ls"}, stdout: "15  /memories/plan.md\n"},
	})
	raw, err := os.ReadFile(filepath.Join(dir, "plan.md"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) || !strings.HasPrefix(string(raw), "cloudmem-age/v1") {
		t.Errorf("the directory holds plaintext, or no ciphertext: %q", raw[:min(len(raw), 40)])
	}

	files := manyFiles(200)
	src := seed(t, storeName(t)+"-src", files)
	backName := storeName(t) + "-back"
	for _, tc := range []cliCase{
		{args: []string{"copy", src, enc},
			stdout: "copied 200 files, skipped 0 that DST already held\nverified 200 files: every SHA-256 is equal (DST also holds 1 file that SRC does not)\n"},
		{args: []string{"copy", enc, "shared://" + backName},
			stdout: "copied 201 files, skipped 0 that DST already held\nverified 201 files: every SHA-256 is equal\n"},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s", tc.args, code, stdout, stderr, tc.code, tc.stdout)
		}
	}
	want := maps(files, map[string]string{"plan.md": secret})
	if got := contents(t, backName); !equalMaps(got, want) {
		t.Errorf("the copy out of the encrypted store holds %d files, want %d, the same", len(got), len(want))
	}
}

// TestCopyImportDryRun: copy --dry-run and import --dry-run make the real
// run's checks (a file DST holds with other content), say what they would
// write, and change nothing; a missing local directory is not created.
func TestCopyImportDryRun(t *testing.T) {
	src := seed(t, storeName(t)+"-src", map[string]string{"a.md": "new", "b.md": "b", "c.md": "c"})
	dstName := storeName(t) + "-dst"
	dst := seed(t, dstName, map[string]string{"a.md": "old", "c.md": "c"})
	missing := filepath.Join(t.TempDir(), "new")
	tarball := makeTar(t, tarEntry{name: "x.md", typeflag: tar.TypeReg, content: "x"}, tarEntry{name: "c.md", typeflag: tar.TypeReg, content: "c"})
	for _, tc := range []cliCase{
		{args: []string{"copy", "--dry-run", src, dst}, code: 1, stderr: `cloudmem copy: a.md: the destination holds other content (--overwrite replaces it)
cloudmem copy: 1 of 3 files would not be copied (1 would be copied, 1 skipped)
`},
		{args: []string{"copy", "--dry-run", "--overwrite", src, dst}, stdout: "would copy 2 files, skip 1 that DST already holds\n"},
		{args: []string{"copy", "--dry-run", src, missing}, stdout: "would copy 3 files, skip 0 that DST already holds\n"},
		{args: []string{"import", "--dry-run", "-", "--store", dst}, stdin: tarball, stdout: "would import 2 files (1 new, 0 replaced, 1 already there)\n"},
	} {
		code, stdout, stderr := cloudmem(tc.args, tc.stdin, nil)
		if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant %d\nstdout:\n%s\nstderr:\n%s", tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
	if got, want := contents(t, dstName), map[string]string{"a.md": "old", "c.md": "c"}; !equalMaps(got, want) {
		t.Errorf("DST holds %q after the dry runs, want %q", got, want)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dry run made %s (%v)", missing, err)
	}
}
