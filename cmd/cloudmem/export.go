package main

import (
	"archive/tar"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// bookkeeping is the top-level name under which stores keep their own
// objects (for example the encryption layer's key): never memory files, so
// never exported, imported or copied.
const bookkeeping = ".cloudmem"

// isBookkeeping reports whether key lies under bookkeeping.
func isBookkeeping(key string) bool {
	return key == bookkeeping || strings.HasPrefix(key, bookkeeping+"/")
}

// plural returns "1 file", "2 files": n and the noun, plural when n is
// not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// memoryFiles lists every key of s except the bookkeeping ones, in key
// order.
func memoryFiles(ctx context.Context, s blob.Store) ([]blob.Info, error) {
	var out []blob.Info
	for info, err := range s.List(ctx, "") {
		if err != nil {
			return nil, fmt.Errorf("listing: %w", err)
		}
		if !isBookkeeping(info.Key) {
			out = append(out, info)
		}
	}
	return out, nil
}

// runExport implements "cloudmem export DIR|-": every memory file of the
// store, as a tar stream on stdout ("-") or as plain files under DIR. Each
// key becomes the entry or file of the same relative name. DIR must be
// missing or empty; it is created with mode 0700, subdirectories with 0700
// and files with 0600, and nothing is ever written outside it (os.Root).
// A file deleted while the export runs is left out.
func runExport(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem export", flag.ContinueOnError)
	usage := subcommandUsage("export DIR|-",
		"Writes every memory file of the store as plain files under DIR (a new or empty directory),\n"+
			"or as a tar stream on stdout (-). Names are the paths under /memories: notes/a.md.\n"+
			"The store's own bookkeeping (.cloudmem/) is left out. import reads both forms back.")
	pos, code, done := c.parseArgs(fs, args, usage, "DIR (- writes a tar stream to stdout)")
	if done {
		return code
	}
	dest := pos[0]
	store, err := c.openStore()
	if err != nil {
		return c.fail("export", err)
	}
	defer blob.Close(store)

	var (
		w      fileWriter
		report = c.stdout
	)
	if dest == "-" {
		tw := tar.NewWriter(c.stdout)
		w, report = tarWriter{tw}, c.stderr
	} else {
		d, err := newDirWriter(dest)
		if err != nil {
			return c.fail("export", err)
		}
		defer d.root.Close()
		w = d
	}
	n, size, err := export(c.ctx, store, w)
	if err != nil {
		return c.fail("export", err)
	}
	fmt.Fprintf(report, "exported %s, %d bytes\n", plural(n, "file"), size)
	return exitOK
}

// A fileWriter receives the files of an export.
type fileWriter interface {
	// WriteFile writes one file; name is a valid blob key.
	WriteFile(name string, data []byte, modified time.Time) error
	// Close finishes the output.
	Close() error
}

// export writes every memory file of s to w and closes w. It returns the
// number of files and their total size.
func export(ctx context.Context, s blob.Store, w fileWriter) (files int, size int64, err error) {
	infos, err := memoryFiles(ctx, s)
	if err != nil {
		return 0, 0, err
	}
	for _, info := range infos {
		data, got, err := s.Get(ctx, info.Key, blob.MaxObjectBytes)
		if errors.Is(err, blob.ErrNotExist) {
			continue // deleted since the listing
		}
		if err != nil {
			return files, size, fmt.Errorf("reading %s: %w", info.Key, err)
		}
		if err := w.WriteFile(info.Key, data, got.Modified); err != nil {
			return files, size, err
		}
		files++
		size += int64(len(data))
	}
	if err := w.Close(); err != nil {
		return files, size, err
	}
	return files, size, nil
}

// tarWriter writes an export as a tar stream of regular files, mode 0600,
// with no directory entries.
type tarWriter struct{ tw *tar.Writer }

func (t tarWriter) WriteFile(name string, data []byte, modified time.Time) error {
	if modified.IsZero() {
		modified = time.Unix(0, 0)
	}
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Mode:     0o600,
		Size:     int64(len(data)),
		ModTime:  modified,
	}
	if err := t.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("writing the tar entry %s: %w", name, err)
	}
	if _, err := t.tw.Write(data); err != nil {
		return fmt.Errorf("writing the tar entry %s: %w", name, err)
	}
	return nil
}

func (t tarWriter) Close() error {
	if err := t.tw.Close(); err != nil {
		return fmt.Errorf("writing the tar stream: %w", err)
	}
	return nil
}

// dirWriter writes an export as plain files under a directory, through an
// os.Root so that no name (and no symbolic link placed in the directory
// meanwhile) can make it write outside.
type dirWriter struct {
	root *os.Root
	dir  string
}

// newDirWriter creates dir (mode 0700) if it is missing, and checks that it
// is empty.
func newDirWriter(dir string) (*dirWriter, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty: export writes into a new or empty directory", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &dirWriter{root: root, dir: dir}, nil
}

func (d *dirWriter) WriteFile(name string, data []byte, _ time.Time) error {
	if parent := path.Dir(name); parent != "." {
		if err := d.root.MkdirAll(parent, 0o700); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
	}
	f, err := d.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600) // whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

func (d *dirWriter) Close() error { return nil } // runExport closes the root
