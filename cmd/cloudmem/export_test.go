package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// exportable is a store's worth of files that stretch both forms: binary
// content, an empty file, hidden and deep names, non-ASCII, a name over the
// 100 bytes of a plain tar header, and bookkeeping that must stay behind.
var exportable = map[string]string{
	"notes/a.md":         "alpha\n",
	"notes/deep/er/b.md": "bravo",
	".hidden":            "h",
	"empty.md":           "",
	"img/pixel.png":      "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff",
	"unicodé/名前.md":      "ünïcode",
	strings.Repeat("long-name/", 12) + "x.md": "long",
	".cloudmem/journal":                       "bookkeeping",
}

// withoutBookkeeping returns files less the keys under .cloudmem/.
func withoutBookkeeping(files map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range files {
		if !blob.IsReserved(k) {
			out[k] = v
		}
	}
	return out
}

// tarEntries reads a tar stream into name → content, checking that every
// entry is a regular file of mode 0600.
func tarEntries(t *testing.T, stream string) map[string]string {
	t.Helper()
	out := map[string]string{}
	tr := tar.NewReader(strings.NewReader(stream))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Mode != 0o600 {
			t.Errorf("entry %s: type %q mode %o, want a regular file of mode 600", hdr.Name, hdr.Typeflag, hdr.Mode)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[hdr.Name] = string(data)
	}
}

func TestExportImportTar(t *testing.T) {
	src := seed(t, storeName(t)+"-src", exportable)
	want := withoutBookkeeping(exportable)
	code, stream, stderr := cloudmem([]string{"--store", src, "export", "-"}, "", nil)
	wantSummary := fmt.Sprintf("exported %d files, %d bytes\n", len(want), totalSize(want))
	if code != 0 || stderr != wantSummary {
		t.Fatalf("export - = %d, stderr:\n%s\nwant 0 and stderr:\n%s", code, stderr, wantSummary)
	}
	if got := tarEntries(t, stream); !equalMaps(got, want) {
		t.Errorf("the tar stream holds %q, want %q", got, want)
	}

	dstName := storeName(t) + "-dst"
	dst := "shared://" + dstName
	runCases(t, dst, []cliCase{
		{args: []string{"import", "-"}, stdin: stream, stdout: "imported 7 files (7 new, 0 replaced, 0 already there)\n"},
		{args: []string{"import", "-"}, stdin: stream, stdout: "imported 7 files (0 new, 0 replaced, 7 already there)\n"},
	})
	if got := contents(t, dstName); !equalMaps(got, want) {
		t.Errorf("after import the store holds %q, want %q", got, want)
	}
}

func TestExportImportDir(t *testing.T) {
	src := seed(t, storeName(t)+"-src", exportable)
	want := withoutBookkeeping(exportable)
	dir := filepath.Join(t.TempDir(), "export")
	runCases(t, src, []cliCase{
		{args: []string{"export", dir}, stdout: fmt.Sprintf("exported %d files, %d bytes\n", len(want), totalSize(want))},
	})
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		wantMode := fs.FileMode(0o600)
		if d.IsDir() {
			wantMode = fs.ModeDir | 0o700
		}
		if info.Mode() != wantMode {
			t.Errorf("%s has mode %v, want %v", path, info.Mode(), wantMode)
		}
		if !d.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			got[filepath.ToSlash(rel)] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !equalMaps(got, want) {
		t.Errorf("the export directory holds %q, want %q", got, want)
	}

	dstName := storeName(t) + "-dst"
	runCases(t, "shared://"+dstName, []cliCase{
		{args: []string{"import", dir}, stdout: "imported 7 files (7 new, 0 replaced, 0 already there)\n"},
	})
	if got := contents(t, dstName); !equalMaps(got, want) {
		t.Errorf("after import the store holds %q, want %q", got, want)
	}

	// A second export into the same directory is refused, and changes
	// nothing there.
	runCases(t, src, []cliCase{
		{args: []string{"export", dir}, code: 1,
			stderr: "cloudmem export: " + dir + " is not empty: export writes into a new or empty directory\n"},
	})
}

func TestExportEmpty(t *testing.T) {
	code, stream, stderr := cloudmem([]string{"--store", "mem://", "export", "-"}, "", nil)
	if code != 0 || stderr != "exported 0 files, 0 bytes\n" || len(tarEntries(t, stream)) != 0 {
		t.Errorf("export - of an empty store = %d, stderr %q, %d bytes of tar", code, stderr, len(stream))
	}
}

func totalSize(files map[string]string) int {
	n := 0
	for _, v := range files {
		n += len(v)
	}
	return n
}

// tarEntry is one entry for makeTar.
type tarEntry struct {
	name     string
	typeflag byte
	content  string
	link     string
}

// makeTar writes entries as a tar stream.
func makeTar(t *testing.T, entries ...tarEntry) string {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		hdr := &tar.Header{Name: e.name, Typeflag: e.typeflag, Mode: 0o644, Linkname: e.link}
		switch e.typeflag {
		case tar.TypeReg:
			hdr.Size = int64(len(e.content))
		case tar.TypeXGlobalHeader:
			hdr = &tar.Header{Typeflag: e.typeflag, PAXRecords: map[string]string{"comment": e.content}}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if e.typeflag != tar.TypeReg {
			continue
		}
		if _, err := io.WriteString(tw, e.content); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
