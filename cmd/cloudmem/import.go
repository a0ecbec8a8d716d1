package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// maxProblems is how many problems import and copy list before summing up
// the rest in one line.
const maxProblems = 20

// runImport implements "cloudmem import DIR|- [--overwrite]": the reverse
// of export. It reads every file first (a tar stream from stdin, or the
// regular files under DIR) and validates all of them before it writes
// anything: each name must be a plain relative name that is a valid memory
// path under /memories (the handler's own rules decide), no entry may be a
// symbolic link or another special file, no name may be both a file and a
// directory, and none may clash with the store (a file with other content,
// unless --overwrite, or a file where a directory is, or the reverse). A
// file already in the store with the same content is left as it is, so an
// interrupted import can be run again. Files are created with
// Put(IfAbsent), or replaced with Put(IfVersion) under --overwrite, so a
// concurrent writer is never overwritten silently. The memory tool's size
// and file-count limits are not applied: import restores what export saved.
// The whole input is held in memory.
func runImport(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem import", flag.ContinueOnError)
	overwrite := fs.Bool("overwrite", false, "replace files the store holds with other content")
	usage := subcommandUsage("import DIR|- [--overwrite]",
		"Stores every regular file under DIR, or every file of a tar stream on stdin (-), as the\n"+
			"memory file of the same relative name (notes/a.md becomes /memories/notes/a.md).\n"+
			"The whole input is checked before anything is written: a bad name, a symbolic link or\n"+
			"a clash with the store stops the import. Files already there with the same content are\n"+
			"skipped, so an interrupted import can be run again.")
	pos, code, done := c.parseArgs(fs, args, usage, "DIR (- reads a tar stream from stdin)")
	if done {
		return code
	}

	var (
		files    []inputFile
		problems []string
		err      error
	)
	if pos[0] == "-" {
		files, problems, err = readTar(c.stdin)
	} else {
		files, problems, err = readDir(pos[0])
	}
	if err != nil {
		return c.fail("import", err)
	}
	more, err := checkNames(files)
	if err != nil {
		return c.fail("import", err)
	}
	if problems = append(problems, more...); len(problems) > 0 {
		return c.reportProblems("import", problems, "nothing was imported")
	}

	store, err := c.openStore()
	if err != nil {
		return c.fail("import", err)
	}
	defer blob.Close(store)
	plan, problems, err := planImport(c.ctx, store, files, *overwrite)
	if err != nil {
		return c.fail("import", err)
	}
	if len(problems) > 0 {
		return c.reportProblems("import", problems, "nothing was imported")
	}
	var written atomic.Int64
	err = forEach(c.ctx, defaultJobs, plan.writes, func(ctx context.Context, w importWrite) error {
		if _, err := store.Put(ctx, w.key, w.data, w.cond); err != nil {
			if errors.Is(err, blob.ErrPrecondition) {
				return fmt.Errorf("%s changed in the store while importing: %w", w.key, err)
			}
			return fmt.Errorf("writing %s: %w", w.key, err)
		}
		written.Add(1)
		return nil
	})
	if err != nil {
		return c.fail("import", fmt.Errorf("%w (%d of %s written; run import again to finish)",
			err, written.Load(), plural(len(plan.writes), "file")))
	}
	fmt.Fprintf(c.stdout, "imported %s (%d new, %d replaced, %d already there)\n",
		plural(len(plan.writes)+plan.unchanged, "file"), len(plan.writes)-plan.replaced, plan.replaced, plan.unchanged)
	return exitOK
}

// inputFile is one file, or one directory, read for import.
type inputFile struct {
	name string // as the input spells it, less a leading "./"
	data []byte
	dir  bool // a directory entry: its name is checked, nothing is written
}

// readTar reads every regular file of a tar stream. Directory entries are
// checked like file names but otherwise ignored (directories exist through
// their files); every other kind of entry is a problem.
func readTar(r io.Reader) (files []inputFile, problems []string, err error) {
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, problems, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading the tar stream: %w", err)
		}
		name := strings.TrimPrefix(hdr.Name, "./")
		switch hdr.Typeflag {
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				return nil, nil, fmt.Errorf("reading the tar stream: %s: %w", hdr.Name, err)
			}
			files = append(files, inputFile{name: name, data: data})
		case tar.TypeDir:
			if name = strings.TrimSuffix(name, "/"); name != "" && name != "." {
				files = append(files, inputFile{name: name, dir: true})
			}
		case tar.TypeXGlobalHeader: // metadata for the whole archive (git archive writes one)
		case tar.TypeSymlink, tar.TypeLink:
			problems = append(problems, fmt.Sprintf("%s: a link (import takes regular files only)", hdr.Name))
		default:
			problems = append(problems, fmt.Sprintf("%s: not a regular file (tar type %q)", hdr.Name, hdr.Typeflag))
		}
	}
}

// readDir reads every regular file under dir. Symbolic links and other
// special files are problems; nothing outside dir is read (os.Root).
func readDir(dir string) (files []inputFile, problems []string, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	fsys := root.FS()
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case name == ".":
			return nil
		case d.IsDir():
			files = append(files, inputFile{name: name, dir: true})
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			problems = append(problems, fmt.Sprintf("%s: a symbolic link (import takes regular files only)", name))
			return nil
		case !d.Type().IsRegular():
			problems = append(problems, fmt.Sprintf("%s: not a regular file", name))
			return nil
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		files = append(files, inputFile{name: name, data: data})
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return files, problems, nil
}

// checkNames checks every name of the input: it must be a plain relative
// name (no leading '/', no empty or "." segment) that the memory handler
// accepts as the path /memories/NAME and maps to the key NAME; it must
// appear once; and no file may lie beneath another file.
func checkNames(files []inputFile) ([]string, error) {
	var problems []string
	keys, err := newKeyChecker()
	if err != nil {
		return nil, err
	}
	isDir := map[string]bool{} // every valid name seen: is it a directory?
	for _, f := range files {
		if msg := keys.check(f.name); msg != "" {
			problems = append(problems, f.name+": "+msg)
			continue
		}
		dir, seen := isDir[f.name]
		switch {
		case !seen:
			isDir[f.name] = f.dir
		case !dir && !f.dir:
			problems = append(problems, f.name+": appears twice in the input")
		case dir != f.dir:
			problems = append(problems, f.name+": both a file and a directory in the input")
		}
	}
	for _, f := range files {
		if f.dir {
			continue
		}
		for a := range ancestors(f.name) {
			if dir, seen := isDir[a]; seen && !dir {
				problems = append(problems, fmt.Sprintf("%s: %s is a file in the input, not a directory", f.name, a))
				break
			}
		}
	}
	return problems, nil
}

// ancestors yields the directories above key, nearest first: "a/b" and
// "a" for "a/b/c".
func ancestors(key string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := strings.LastIndexByte(key, '/'); i > 0; i = strings.LastIndexByte(key, '/') {
			key = key[:i]
			if !yield(key) {
				return
			}
		}
	}
}

// keyChecker asks the memory handler which key a path names, by running
// its view over a probe of a store that holds nothing.
type keyChecker struct {
	probe *getProbe
	h     *memory.Handler
}

func newKeyChecker() (*keyChecker, error) {
	p := &getProbe{Store: mem.New(nil)}
	// An empty in-memory store never fails, so nothing is logged.
	h, err := memory.New(p, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	return &keyChecker{probe: p, h: h}, nil
}

// check returns "" when name is a plain relative name that the handler
// maps, as /memories/NAME, to the key NAME; otherwise why not (the
// handler's error text, without its "Error: " prefix, when it refuses the
// path).
func (k *keyChecker) check(name string) string {
	switch {
	case name == "":
		return "an empty name"
	case strings.HasPrefix(name, "/"):
		return "an absolute name (import takes names relative to /memories)"
	}
	path := "/memories/" + name
	*k.probe = getProbe{Store: k.probe.Store}
	input, err := json.Marshal(map[string]any{"command": "view", "path": path})
	if err != nil {
		return err.Error()
	}
	res := k.h.Execute(context.Background(), input)
	switch {
	case !k.probe.called && res.IsError:
		return strings.TrimPrefix(res.Text, "Error: ")
	case !k.probe.called:
		return "names the root, /memories"
	case k.probe.key != name:
		return fmt.Sprintf("not a plain relative name (it is the memory path /memories/%s)", k.probe.key)
	}
	return ""
}

// importWrite is one Put of an import.
type importWrite struct {
	key  string
	data []byte
	cond blob.Cond
}

// importPlan is what an import will write.
type importPlan struct {
	writes    []importWrite
	replaced  int // writes that replace a file with other content
	unchanged int // files already in the store with the same content
}

// planImport compares the input with the store: a file already there with
// the same content needs no write, with other content it is a problem
// unless overwrite is set; a file where the store has a directory, or
// beneath a file of the store, is a problem.
func planImport(ctx context.Context, s blob.Store, files []inputFile, overwrite bool) (importPlan, []string, error) {
	infos, err := memoryFiles(ctx, s)
	if err != nil {
		return importPlan{}, nil, err
	}
	stored := make(map[string]blob.Info, len(infos))
	dirs := map[string]bool{}
	for _, info := range infos {
		stored[info.Key] = info
		for dir := range ancestors(info.Key) {
			dirs[dir] = true
		}
	}
	var (
		plan     importPlan
		problems []string
	)
	for _, f := range files {
		if f.dir {
			if _, ok := stored[f.name]; ok {
				problems = append(problems, f.name+": a directory in the input, a file in the store")
			}
			continue
		}
		if dirs[f.name] {
			problems = append(problems, f.name+": a file in the input, a directory in the store")
			continue
		}
		if a := fileAncestor(f.name, stored); a != "" {
			problems = append(problems, fmt.Sprintf("%s: %s is a file in the store, not a directory", f.name, a))
			continue
		}
		info, exists := stored[f.name]
		if !exists {
			plan.writes = append(plan.writes, importWrite{key: f.name, data: f.data, cond: blob.Cond{IfAbsent: true}})
			continue
		}
		data, got, err := s.Get(ctx, f.name, blob.MaxObjectBytes)
		if errors.Is(err, blob.ErrNotExist) { // deleted since the listing
			plan.writes = append(plan.writes, importWrite{key: f.name, data: f.data, cond: blob.Cond{IfAbsent: true}})
			continue
		}
		if err != nil {
			return importPlan{}, nil, fmt.Errorf("reading %s: %w", info.Key, err)
		}
		switch {
		case bytes.Equal(data, f.data):
			plan.unchanged++
		case !overwrite:
			problems = append(problems, f.name+": the store holds other content (--overwrite replaces it)")
		default:
			plan.writes = append(plan.writes, importWrite{key: f.name, data: f.data, cond: blob.Cond{IfVersion: got.Version}})
			plan.replaced++
		}
	}
	return plan, problems, nil
}

// fileAncestor returns the nearest directory above key that is a file in
// stored, or "".
func fileAncestor(key string, stored map[string]blob.Info) string {
	for a := range ancestors(key) {
		if _, ok := stored[a]; ok {
			return a
		}
	}
	return ""
}

// reportProblems prints each problem (at most maxProblems of them) on
// stderr, then the outcome, and returns exitFail.
func (c *cli) reportProblems(name string, problems []string, outcome string) int {
	for i, p := range problems {
		if i == maxProblems {
			fmt.Fprintf(c.stderr, "cloudmem %s: ... and %d more\n", name, len(problems)-i)
			break
		}
		fmt.Fprintf(c.stderr, "cloudmem %s: %s\n", name, p)
	}
	fmt.Fprintf(c.stderr, "cloudmem %s: %s\n", name, outcome)
	return exitFail
}
