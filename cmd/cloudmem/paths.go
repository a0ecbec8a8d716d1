package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloudmem/cloudmem/memory"
)

// memPath returns the memory path a command-line PATH means: a path that
// does not start with '/' is relative to /memories ("notes.md" is
// /memories/notes.md, "." and "./" are /memories); any other path is the
// handler's to judge, as the model's paths are.
func memPath(p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	rel := strings.TrimPrefix(p, "./")
	if rel == "" || rel == "." {
		return memory.PathOf("")
	}
	return memory.PathOf("") + "/" + rel
}

// kind is what a memory path names.
type kind int

const (
	kindNone kind = iota // nothing: the error says why
	kindFile
	kindDir // a directory, /memories itself, or a mount point
)

// pathKind says whether path names a file or a directory, and returns the
// directory's files (for a dry run). A path that names nothing returns the
// handler's error.
func pathKind(ctx context.Context, h *memory.Handler, path string) (kind, []memory.FileInfo, error) {
	files, err := h.Files(ctx, path)
	switch {
	case err == nil:
		return kindDir, files, nil
	case errors.Is(err, memory.ErrNotDir):
		// Files returns ErrNotDir when nothing lies under the path and
		// the path itself is a file.
		return kindFile, nil, nil
	}
	return kindNone, nil, err
}

// errIsDirectory is rm's refusal of a directory without -r.
func errIsDirectory(path string) error {
	return fmt.Errorf("%s is a directory: rm -r deletes it with everything beneath it", path)
}
