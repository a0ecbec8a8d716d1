package transfer

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// A FileWriter receives the files of an Export. NewTarWriter and
// NewDirWriter make the two kinds cloudmem writes.
type FileWriter interface {
	// WriteFile writes one file; name is a valid blob key (notes/a.md).
	// modified may be zero.
	WriteFile(name string, data []byte, modified time.Time) error
	// Close finishes the output.
	Close() error
}

// ExportStats counts what Export wrote.
type ExportStats struct {
	Files int   // files written
	Bytes int64 // their total size
}

// Export writes every memory file of s (see the package documentation) to
// w, in key order, each under its key, and then closes w. A file deleted
// while the export runs is left out. A file over the read limit
// (memory.ReadLimit) is not read: it is left out too, and returned as a
// Problem of kind ErrTooLarge in a *ProblemsError once w is closed. On
// another failure w is not closed, and the stats count what was written
// before it.
func Export(ctx context.Context, s blob.Store, w FileWriter) (ExportStats, error) {
	var stats ExportStats
	files, err := memoryFiles(ctx, s)
	if err != nil {
		return stats, err
	}
	limit := memory.ReadLimit(s)
	var problems []Problem
	for _, f := range files {
		if f.Size > limit {
			problems = append(problems, tooLarge(f.Key, "", f.Size, limit, nil))
			continue
		}
		data, info, err := s.Get(ctx, f.Key, limit)
		if errors.Is(err, blob.ErrNotExist) {
			continue // deleted since the listing
		}
		if errors.Is(err, blob.ErrTooLarge) { // grew since the listing
			problems = append(problems, tooLarge(f.Key, "", -1, limit, err))
			continue
		}
		if err != nil {
			return stats, fmt.Errorf("reading %s: %w", f.Key, err)
		}
		if err := w.WriteFile(f.Key, data, info.Modified); err != nil {
			return stats, err
		}
		stats.Files++
		stats.Bytes += int64(len(data))
	}
	if err := w.Close(); err != nil {
		return stats, err
	}
	if len(problems) > 0 {
		sortProblems(problems)
		return stats, &ProblemsError{Problems: problems}
	}
	return stats, nil
}

// NewTarWriter returns a FileWriter that writes a tar stream to w: one
// regular file entry per file, mode 0600, with no directory entries. Its
// Close ends the stream (it does not close w).
func NewTarWriter(w io.Writer) FileWriter { return tarWriter{tar.NewWriter(w)} }

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

// NewDirWriter returns a FileWriter that writes plain files under dir,
// which it creates (mode 0700, with any missing parents) when missing and
// which must be empty: subdirectories get mode 0700 and files 0600, and
// nothing is ever written outside dir, whatever the names or symbolic links
// placed in dir meanwhile (os.Root). A file that exists is never replaced.
// Close releases dir; call it also when Export fails.
func NewDirWriter(dir string) (FileWriter, error) {
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
	return &dirWriter{root: root}, nil
}

type dirWriter struct{ root *os.Root }

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

// Close closes dir; a second Close is an error from os.Root, harmless.
func (d *dirWriter) Close() error { return d.root.Close() }
