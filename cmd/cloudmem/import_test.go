package main

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/memory"
)

// TestImportRejects checks that an input with any bad entry is refused as a
// whole: every problem is named, and nothing is written.
func TestImportRejects(t *testing.T) {
	name := storeName(t)
	stream := makeTar(t,
		tarEntry{name: "ok.md", typeflag: tar.TypeReg, content: "fine"},
		tarEntry{name: "../x", typeflag: tar.TypeReg, content: "escape"},
		tarEntry{name: "/abs", typeflag: tar.TypeReg, content: "absolute"},
		tarEntry{name: "link", typeflag: tar.TypeSymlink, link: "/etc/passwd"},
		tarEntry{name: "hard", typeflag: tar.TypeLink, link: "ok.md"},
		tarEntry{name: "fifo", typeflag: tar.TypeFifo},
		tarEntry{name: ".cloudmem/x", typeflag: tar.TypeReg, content: "bookkeeping"},
		tarEntry{name: "a//b", typeflag: tar.TypeReg, content: "unclean"},
		tarEntry{name: "%2e%2e/y", typeflag: tar.TypeReg, content: "encoded"},
		tarEntry{name: "dup.md", typeflag: tar.TypeReg, content: "1"},
		tarEntry{name: "dup.md", typeflag: tar.TypeReg, content: "2"},
		tarEntry{name: "f", typeflag: tar.TypeReg, content: "file"},
		tarEntry{name: "f/g", typeflag: tar.TypeReg, content: "beneath a file"},
		tarEntry{name: "d/", typeflag: tar.TypeDir},
		tarEntry{name: "d", typeflag: tar.TypeReg, content: "and a file"},
	)
	runCases(t, "shared://"+name, []cliCase{{args: []string{"import", "-"}, stdin: stream, code: 1, stderr: `cloudmem import: link: a link (import takes regular files only)
cloudmem import: hard: a link (import takes regular files only)
cloudmem import: fifo: not a regular file (tar type '6')
cloudmem import: ../x: Path /memories/../x would escape /memories directory
cloudmem import: /abs: an absolute name (import takes names relative to /memories)
cloudmem import: .cloudmem/x: Path /memories/.cloudmem/x is reserved
cloudmem import: a//b: not a plain relative name (it is the memory path /memories/a/b)
cloudmem import: %2e%2e/y: Path /memories/%2e%2e/y would escape /memories directory
cloudmem import: dup.md: appears twice in the input
cloudmem import: d: both a file and a directory in the input
cloudmem import: f/g: f is a file in the input, not a directory
cloudmem import: nothing was imported
`}})
	if got := contents(t, name); len(got) != 0 {
		t.Errorf("a refused import wrote %q", got)
	}
}

// TestImportTarForms checks the names tar itself writes: "./" in front and
// directory entries, and a global header.
func TestImportTarForms(t *testing.T) {
	name := storeName(t)
	stream := makeTar(t,
		tarEntry{typeflag: tar.TypeXGlobalHeader, content: "written by git archive"},
		tarEntry{name: "./", typeflag: tar.TypeDir},
		tarEntry{name: "./notes/", typeflag: tar.TypeDir},
		tarEntry{name: "./notes/a.md", typeflag: tar.TypeReg, content: "a"},
		tarEntry{name: "./empty/", typeflag: tar.TypeDir},
	)
	tmp := t.TempDir() // the stream is spooled here, and the spool removed
	t.Setenv("TMPDIR", tmp)
	runCases(t, "shared://"+name, []cliCase{
		{args: []string{"import", "-"}, stdin: stream, stdout: "imported 1 file (1 new, 0 replaced, 0 already there)\n"},
	})
	if got, want := contents(t, name), map[string]string{"notes/a.md": "a"}; !equalMaps(got, want) {
		t.Errorf("the store holds %q, want %q", got, want)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("the spool was left behind: %v, %v", left, err)
	}
}

// TestImportDirRejectsLinks checks that a symbolic link in the input
// directory stops the import before anything is written.
func TestImportDirRejectsLinks(t *testing.T) {
	name := storeName(t)
	dir := t.TempDir()
	secret := filepath.Join(t.TempDir(), "secret")
	for path, content := range map[string]string{"a.md": "a", secret: "outside"} {
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(secret), filepath.Join(dir, "linkdir")); err != nil {
		t.Fatal(err)
	}
	runCases(t, "shared://"+name, []cliCase{{args: []string{"import", dir}, code: 1, stderr: `cloudmem import: link.md: a symbolic link (import takes regular files only)
cloudmem import: linkdir: a symbolic link (import takes regular files only)
cloudmem import: nothing was imported
`}})
	if got := contents(t, name); len(got) != 0 {
		t.Errorf("a refused import wrote %q", got)
	}
	runCases(t, "shared://"+name, []cliCase{{args: []string{"import", filepath.Join(dir, "missing")}, code: 1,
		stderr: "cloudmem import: open " + filepath.Join(dir, "missing") + ": no such file or directory\n"}})
}

// TestImportClashes checks an input against what the store holds: other
// content is refused unless --overwrite; a file where the store has a
// directory, or beneath a file of the store, is always refused.
func TestImportClashes(t *testing.T) {
	name := storeName(t)
	before := map[string]string{"a.md": "old", "d/x": "x", "file": "f", "same.md": "same"}
	store := seed(t, name, before)
	clash := makeTar(t,
		tarEntry{name: "a.md", typeflag: tar.TypeReg, content: "new"},
		tarEntry{name: "d", typeflag: tar.TypeReg, content: "file over a directory"},
		tarEntry{name: "file/y", typeflag: tar.TypeReg, content: "beneath a file"},
		tarEntry{name: "file/", typeflag: tar.TypeDir},
		tarEntry{name: "same.md", typeflag: tar.TypeReg, content: "same"},
	)
	runCases(t, store, []cliCase{{args: []string{"import", "-"}, stdin: clash, code: 1, stderr: `cloudmem import: a.md: the store holds other content (--overwrite replaces it)
cloudmem import: d: a file in the input, a directory in the store
cloudmem import: file/y: file is a file in the store, not a directory
cloudmem import: file: a directory in the input, a file in the store
cloudmem import: nothing was imported
`}})
	if got := contents(t, name); !equalMaps(got, before) {
		t.Errorf("a refused import changed the store to %q", got)
	}

	update := makeTar(t,
		tarEntry{name: "a.md", typeflag: tar.TypeReg, content: "new"},
		tarEntry{name: "same.md", typeflag: tar.TypeReg, content: "same"},
		tarEntry{name: "d/y", typeflag: tar.TypeReg, content: "y"},
	)
	runCases(t, store, []cliCase{
		{args: []string{"import", "-"}, stdin: update, code: 1, stderr: `cloudmem import: a.md: the store holds other content (--overwrite replaces it)
cloudmem import: nothing was imported
`},
		{args: []string{"import", "--overwrite", "-"}, stdin: update, stdout: "imported 3 files (1 new, 1 replaced, 1 already there)\n"},
	})
	want := map[string]string{"a.md": "new", "d/x": "x", "d/y": "y", "file": "f", "same.md": "same"}
	if got := contents(t, name); !equalMaps(got, want) {
		t.Errorf("after import --overwrite the store holds %q, want %q", got, want)
	}
}

func TestImportBadTar(t *testing.T) {
	runCases(t, "mem://", []cliCase{{args: []string{"import", "-"}, stdin: "not a tar stream, but long enough to fill a header block? " + string(make([]byte, 600)),
		code: 1, stderr: "cloudmem import: reading the tar stream: archive/tar: invalid tar header\n"}})
}

// TestImportWriteFails checks the report of an import whose writes fail
// after the checks passed.
func TestImportWriteFails(t *testing.T) {
	stream := makeTar(t, tarEntry{name: "a.md", typeflag: tar.TypeReg, content: "a"})
	runCases(t, "mem://?readonly=true", []cliCase{{args: []string{"import", "-"}, stdin: stream, code: 1,
		stderr: "cloudmem import: writing a.md: The memory directory is read-only: write is not allowed (0 of 1 file written; run import again to finish)\n"}})
}

// TestImportSkipsTooLarge: a tar entry over the store's read limit (the
// larger of its file size limit and the 5 MiB image limit) is not read;
// the rest is imported, and the command says what it left out and fails.
func TestImportSkipsTooLarge(t *testing.T) {
	name := storeName(t)
	stream := makeTar(t,
		tarEntry{name: "a.md", typeflag: tar.TypeReg, content: "a"},
		tarEntry{name: "huge.bin", typeflag: tar.TypeReg, content: strings.Repeat("x", memory.DefaultMaxImageBytes+1)},
	)
	runCases(t, "shared://"+name, []cliCase{{args: []string{"import", "-"}, stdin: stream, code: 1,
		stderr: "cloudmem import: huge.bin: is 5242881 bytes, over the limit of 5242880 bytes that a memory command reads; not moved\n" +
			"cloudmem import: imported 1 file (1 new, 0 replaced, 0 already there); 1 not imported\n"}})
	if got, want := contents(t, name), map[string]string{"a.md": "a"}; !equalMaps(got, want) {
		t.Errorf("the store holds %q, want %q", got, want)
	}
}

// TestImportRefusedByTheStore: the store's own rules (here its URL's
// max_files and max_file_bytes) refuse a file through the write gate; the
// rest is imported, and the command names each refused file with the memory
// tool's text and says how much was imported.
func TestImportRefusedByTheStore(t *testing.T) {
	name := storeName(t)
	seed(t, name, map[string]string{"a.md": "a", "b.md": "b"})
	full := "shared://" + name + "?max_files=2"
	runCases(t, full, []cliCase{
		{args: []string{"import", "-"}, stdin: makeTar(t, tarEntry{name: "a.md", typeflag: tar.TypeReg, content: "a"},
			tarEntry{name: "c.md", typeflag: tar.TypeReg, content: "c"}), code: 1,
			stderr: "cloudmem import: c.md: The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first.\n" +
				"cloudmem import: imported 1 file (0 new, 0 replaced, 1 already there); 1 not imported\n"},
	})
	runCases(t, "shared://"+storeName(t)+"-small?max_file_bytes=5", []cliCase{
		{args: []string{"import", "-"}, stdin: makeTar(t, tarEntry{name: "d.md", typeflag: tar.TypeReg, content: "0123456789"}), code: 1,
			stderr: "cloudmem import: d.md: File /memories/d.md would be 10 bytes, over the limit of 5 bytes per memory file\n" +
				"cloudmem import: nothing was imported\n"},
	})
	if got := contents(t, name); !equalMaps(got, map[string]string{"a.md": "a", "b.md": "b"}) {
		t.Errorf("the store holds %q", got)
	}
}
