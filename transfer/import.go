package transfer

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// File is one entry of an import's input, as ReadTar and ReadDir return
// it.
type File struct {
	Name string // as the input spells it, less a leading "./" (notes/a.md)
	Data []byte // the content of a regular file held in memory (nil when Load reads it)
	// Load, when not nil, reads the content of a regular file from where
	// ReadDir or ReadTar left it (the directory read, or ReadTar's spool),
	// so that Import holds in memory only the files it compares or writes
	// at the moment. Content that grew past the limit by then is an error
	// wrapping blob.ErrTooLarge.
	Load func() ([]byte, error)
	Dir  bool // a directory entry: its name is checked, nothing is written
	// Invalid, when not "", says why the entry cannot be imported (a link,
	// a device); Import refuses an input that holds one.
	Invalid string
	// Limit, when not 0, is the limit ReadTar or ReadDir was given, which
	// this regular file is over: its content was not read (Data and Load
	// are nil), and Size is its size (-1: unknown). Import skips such a
	// file with a Problem of kind ErrTooLarge.
	Limit, Size int64
}

// content returns the content of a regular file f.
func (f File) content() ([]byte, error) {
	if f.Load == nil {
		return f.Data, nil
	}
	return f.Load()
}

// ReadTar reads every entry of a tar stream. Regular files and directories
// become Files; a global header (git archive writes one) is skipped; every
// other entry becomes a File with Invalid set. A file over limit bytes is
// not read (File.Size says its size). A limit of 0 or less means
// memory.ReadLimit of a store without limits of its own (5 MiB); give
// memory.ReadLimit of the destination.
//
// With spool "", every file read is held in memory (File.Data). Otherwise
// spool is a directory (the caller makes it, and removes it once the
// import is done) that each file is written into as it is read, and the
// Files read it back when Import needs it (File.Load): a stream of any
// size is then imported in the memory of the files being written at once.
// An error is returned only when the stream itself is malformed or
// unreadable, or the spool cannot be written.
func ReadTar(r io.Reader, limit int64, spool string) ([]File, error) {
	limit = importLimit(limit)
	var files []File
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the tar stream: %w", err)
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		switch hdr.Typeflag {
		case tar.TypeReg:
			if hdr.Size > limit { // not read: Next skips it
				files = append(files, File{Name: name, Size: hdr.Size, Limit: limit})
				continue
			}
			f := File{Name: name}
			if spool == "" {
				f.Data, err = io.ReadAll(tr)
			} else {
				f.Load, err = spoolFile(tr, filepath.Join(spool, strconv.Itoa(len(files))), limit)
			}
			if err != nil {
				return nil, fmt.Errorf("reading the tar stream: %s: %w", hdr.Name, err)
			}
			files = append(files, f)
		case tar.TypeDir:
			if name = strings.TrimSuffix(name, "/"); name != "" && name != "." {
				files = append(files, File{Name: name, Dir: true})
			}
		case tar.TypeXGlobalHeader: // metadata for the whole archive
		case tar.TypeSymlink, tar.TypeLink:
			files = append(files, File{Name: hdr.Name, Invalid: "a link (import takes regular files only)"})
		default:
			files = append(files, File{Name: hdr.Name, Invalid: fmt.Sprintf("not a regular file (tar type %q)", hdr.Typeflag)})
		}
	}
}

// spoolFile copies r into a new file at path (0600) and returns the Load
// that reads it back, refusing more than limit bytes.
func spoolFile(r io.Reader, path string, limit int64) (func() ([]byte, error), error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spooling: %w", err)
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	dir, name := filepath.Split(path)
	return func() ([]byte, error) { return loadAtMost(os.DirFS(dir), name, limit) }, nil
}

// ReadDir lists every regular file and directory under dir. Symbolic links
// and other special files become Files with Invalid set; nothing outside
// dir is read (os.Root). A file over limit bytes is not read, as in
// ReadTar, whose limit it takes. The content stays on disk until Import
// needs it (File.Load), so a directory of any size is imported in the
// memory of the files being written at once.
func ReadDir(dir string, limit int64) ([]File, error) {
	limit = importLimit(limit)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	// The files are read later, when Import needs them, from the directory
	// dir names now: a symbolic link to it that is pointed elsewhere
	// meanwhile does not swap the content under the listing.
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		root.Close()
		return nil, err
	}
	defer root.Close()
	fsys := root.FS()
	var files []File
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case name == ".":
			return nil
		case d.IsDir():
			files = append(files, File{Name: name, Dir: true})
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			files = append(files, File{Name: name, Invalid: "a symbolic link (import takes regular files only)"})
			return nil
		case !d.Type().IsRegular():
			files = append(files, File{Name: name, Invalid: "not a regular file"})
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > limit {
			files = append(files, File{Name: name, Size: info.Size(), Limit: limit})
			return nil
		}
		files = append(files, File{Name: name, Load: func() ([]byte, error) {
			root, err := os.OpenRoot(dir)
			if err != nil {
				return nil, err
			}
			defer root.Close()
			return loadAtMost(root.FS(), name, limit)
		}})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return files, nil
}

// ImportOptions configures Import. A nil *ImportOptions is the zero value.
type ImportOptions struct {
	// Jobs is how many files are written at a time; 0 means DefaultJobs.
	Jobs int
	// Overwrite replaces a file the store holds with other content (with
	// Put(IfVersion)); false makes it a Problem of kind ErrDiffers.
	Overwrite bool
}

// ImportStats counts what Import planned and did.
type ImportStats struct {
	New       int // files to create (less those the store's rules refused)
	Replaced  int // files to replace (Overwrite; likewise)
	Unchanged int // files the store already held with the same content
	Written   int // writes done: New+Replaced when Import succeeds
}

// Import stores files in s as the memory files of the same names
// (notes/a.md becomes /memories/notes/a.md). It checks the whole input
// before it writes anything: each name must be a plain relative name that
// memory.Resolve maps, as /memories/NAME, to the key NAME; no entry may be
// Invalid; no name may appear twice or be both a file and a directory, and
// no file may lie beneath another file of the input (ErrInvalidInput); and
// none may clash with the store: a file with other content unless
// Overwrite (ErrDiffers), a file where the store has a directory or
// beneath a file of the store, or the reverse (ErrClash), a file the store
// holds over its read limit, so that it cannot be compared (ErrTooLarge).
// Any of these is
// returned as a *ProblemsError, in the order of the input, with nothing
// written.
//
// A file already in the store with the same content is left as it is.
// Every file is written through a memory.Handler over s (Handler.Write):
// created only where no file is, or replaced only at the version planned,
// so a concurrent writer is never overwritten silently: its change makes
// the import fail with an error wrapping blob.ErrPrecondition. The store's
// rules hold as for the model's commands: a file over its file size limit,
// or one more than its file limit allows, is not written and is a Problem
// of kind ErrRefused, returned with the others once the rest is imported.
func Import(ctx context.Context, s blob.Store, files []File, opts *ImportOptions) (_ ImportStats, err error) {
	if opts == nil {
		opts = &ImportOptions{}
	}
	// Files over the read limit are left out, and reported once the rest
	// is imported.
	var skipped []Problem
	files = slices.DeleteFunc(slices.Clone(files), func(f File) bool {
		if f.Limit != 0 && !f.Dir && f.Invalid == "" {
			skipped = append(skipped, tooLarge(f.Name, "", f.Size, f.Limit, nil))
			return true
		}
		return false
	})
	defer func() { // after every other deferred call: the skipped files are always said
		if len(skipped) > 0 {
			sortProblems(skipped)
			err = errors.Join(err, &ProblemsError{Problems: skipped})
		}
	}()
	if problems := checkInput(files); len(problems) > 0 {
		return ImportStats{}, &ProblemsError{Problems: problems}
	}
	plan, err := planImport(ctx, s, files, opts.Overwrite)
	if err != nil {
		return ImportStats{}, err
	}
	if len(plan.problems) > 0 {
		return ImportStats{}, &ProblemsError{Problems: plan.problems}
	}
	if len(plan.writes) == 0 {
		return plan.stats, nil
	}
	gate, err := newGate(s)
	if err != nil {
		return ImportStats{}, err
	}
	var (
		written  atomic.Int64
		mu       sync.Mutex
		rejected []Problem // skipped while writing: refused by the destination's rules, or grown too large
	)
	err = forEach(ctx, jobs(opts.Jobs), plan.writes, func(ctx context.Context, w importWrite) error {
		key := w.file.Name
		// skip leaves this file out of the import, said with the others
		// once the rest is imported, and out of the planned counts.
		skip := func(p Problem) error {
			mu.Lock()
			defer mu.Unlock()
			rejected = append(rejected, p)
			if w.ifVersion == "" {
				plan.stats.New--
			} else {
				plan.stats.Replaced--
			}
			return nil
		}
		data, err := w.file.content()
		if errors.Is(err, blob.ErrTooLarge) { // grew past the limit since the plan: skipped, as at the plan
			return skip(tooLarge(key, "", -1, 0, err))
		}
		if err != nil {
			return fmt.Errorf("reading %s from the input: %w", key, err)
		}
		_, err = gate.Write(ctx, memory.PathOf(key), data, w.ifVersion)
		refusal, refused := memory.Refusal(err)
		switch {
		case err == nil:
			written.Add(1)
			return nil
		case errors.Is(err, memory.ErrConflict), errors.Is(err, memory.ErrExists), errors.Is(err, memory.ErrNotDir):
			return fmt.Errorf("%s changed in the store while importing: %w (%w)", key, blob.ErrPrecondition, err)
		case refused:
			return skip(Problem{Key: key, Reason: refusal, Kind: ErrRefused})
		}
		return fmt.Errorf("writing %s: %w", key, err)
	})
	plan.stats.Written = int(written.Load())
	skipped = append(skipped, rejected...) // said with the skipped files, once the rest is imported
	return plan.stats, err
}

// checkInput returns the problems of the input on its own: Invalid entries
// first, then names that are not plain memory names, names that appear
// twice or as both a file and a directory, and files beneath a file.
func checkInput(files []File) []Problem {
	var problems []Problem
	bad := func(name, reason string) {
		problems = append(problems, Problem{Key: name, Reason: reason, Kind: ErrInvalidInput})
	}
	for _, f := range files {
		if f.Invalid != "" {
			bad(f.Name, f.Invalid)
		}
	}
	isDir := map[string]bool{} // every valid name seen: is it a directory?
	valid := make([]bool, len(files))
	for i, f := range files {
		if f.Invalid != "" {
			continue
		}
		if msg := checkName(f.Name); msg != "" {
			bad(f.Name, msg)
			continue
		}
		valid[i] = true
		dir, seen := isDir[f.Name]
		switch {
		case !seen:
			isDir[f.Name] = f.Dir
		case !dir && !f.Dir:
			bad(f.Name, "appears twice in the input")
		case dir != f.Dir:
			bad(f.Name, "both a file and a directory in the input")
		}
	}
	for i, f := range files {
		if f.Dir || !valid[i] {
			continue
		}
		for p := parent(f.Name); p != ""; p = parent(p) {
			if dir, seen := isDir[p]; seen && !dir {
				bad(f.Name, p+" is a file in the input, not a directory")
				break
			}
		}
	}
	return problems
}

// checkName returns "" when name is a plain relative name that
// memory.Resolve maps, as /memories/NAME, to the key NAME; otherwise why
// not (for a path the model could not use, the handler's own text).
func checkName(name string) string {
	switch {
	case name == "":
		return "an empty name"
	case strings.HasPrefix(name, "/"):
		return "an absolute name (import takes names relative to /memories)"
	}
	key, err := memory.Resolve("/memories/" + name)
	switch {
	case err != nil:
		return err.Error()
	case key == "":
		return "names the root, /memories"
	case key != name:
		return "not a plain relative name (it is the memory path " + memory.PathOf(key) + ")"
	}
	return ""
}

// parent returns the directory key above the valid key key ("a/b" for
// "a/b/c"), or "" at the top.
func parent(key string) string {
	if i := strings.LastIndexByte(key, '/'); i > 0 {
		return key[:i]
	}
	return ""
}

// importWrite is one Put of an import.
type importWrite struct {
	file      File
	ifVersion string // "": a create
}

// importPlan is what an import will write, or why it will not.
type importPlan struct {
	writes   []importWrite
	stats    ImportStats
	problems []Problem
}

// planImport compares the input, which checkInput passed, with the store:
// a file already there with the same content needs no write, with other
// content it is a problem unless overwrite; a file where the store has a
// directory, or beneath a file of the store, is a problem, as is a
// directory of the input that is a file of the store.
func planImport(ctx context.Context, s blob.Store, files []File, overwrite bool) (importPlan, error) {
	stored, err := memoryFiles(ctx, s)
	if err != nil {
		return importPlan{}, err
	}
	isFile := make(map[string]bool, len(stored))
	isDir := map[string]bool{}
	for _, f := range stored {
		isFile[f.Key] = true
		for p := parent(f.Key); p != "" && !isDir[p]; p = parent(p) {
			isDir[p] = true
		}
	}
	var plan importPlan
	readLimit := memory.ReadLimit(s)
	clash := func(name, reason string) {
		plan.problems = append(plan.problems, Problem{Key: name, Reason: reason, Kind: ErrClash})
	}
	for _, f := range files {
		if f.Dir {
			if isFile[f.Name] {
				clash(f.Name, "a directory in the input, a file in the store")
			}
			continue
		}
		if isDir[f.Name] {
			clash(f.Name, "a file in the input, a directory in the store")
			continue
		}
		if p := fileAbove(f.Name, isFile); p != "" {
			clash(f.Name, p+" is a file in the store, not a directory")
			continue
		}
		create := importWrite{file: f}
		if !isFile[f.Name] {
			plan.writes = append(plan.writes, create)
			plan.stats.New++
			continue
		}
		data, got, err := s.Get(ctx, f.Name, readLimit)
		var local []byte
		if err == nil {
			local, err = f.content()
			if errors.Is(err, blob.ErrTooLarge) { // grew since it was listed
				plan.problems = append(plan.problems, tooLarge(f.Name, "", -1, readLimit, err))
				continue
			}
			if err != nil {
				return importPlan{}, fmt.Errorf("reading %s from the input: %w", f.Name, err)
			}
		}
		switch {
		case errors.Is(err, blob.ErrNotExist): // deleted since the listing
			plan.writes = append(plan.writes, create)
			plan.stats.New++
		case errors.Is(err, blob.ErrTooLarge):
			plan.problems = append(plan.problems, tooLarge(f.Name, "the store's object ", -1, readLimit, err))
		case err != nil:
			return importPlan{}, fmt.Errorf("reading %s: %w", f.Name, err)
		case bytes.Equal(data, local):
			plan.stats.Unchanged++
		case !overwrite:
			plan.problems = append(plan.problems, Problem{Key: f.Name, Reason: "the store holds other content", Kind: ErrDiffers})
		default:
			plan.writes = append(plan.writes, importWrite{file: f, ifVersion: got.Version})
			plan.stats.Replaced++
		}
	}
	return plan, nil
}

// fileAbove returns the nearest directory above key that is a file of the
// store, or "".
func fileAbove(key string, isFile map[string]bool) string {
	for p := parent(key); p != ""; p = parent(p) {
		if isFile[p] {
			return p
		}
	}
	return ""
}

// importLimit is the limit of ReadTar and ReadDir: limit, or when it is 0
// or less the read limit of a store without limits of its own.
func importLimit(limit int64) int64 {
	if limit > 0 {
		return limit
	}
	return memory.DefaultMaxImageBytes
}

// loadAtMost reads the file name of fsys, or returns an error wrapping
// blob.ErrTooLarge when it holds more than limit bytes (it grew since it
// was listed).
func loadAtMost(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &blob.TooLargeError{Key: name, Size: -1, Limit: limit}
	}
	return data, nil
}
