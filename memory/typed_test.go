package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/policy"
)

// typedCall runs the command of a golden case's input through the typed
// method. ok is false when the input does not decode to a well-typed command
// (those cases test Execute's decoding, which the typed API has no need of).
func typedCall(ctx context.Context, h *memory.Handler, input string) (res memory.Result, ok bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(input), &fields) != nil {
		return res, false
	}
	str := func(name string) (string, bool) {
		raw, found := fields[name]
		var s string
		return s, found && json.Unmarshal(raw, &s) == nil && string(raw) != "null"
	}
	name, _ := str("command")
	path, hasPath := str("path")
	switch name {
	case "view":
		var r []int
		if raw, found := fields["view_range"]; found && json.Unmarshal(raw, &r) != nil {
			return res, false
		}
		return h.View(ctx, path, r), hasPath
	case "create":
		text, hasText := str("file_text")
		return h.Create(ctx, path, text), hasPath && hasText
	case "str_replace":
		old, hasOld := str("old_str")
		repl, _ := str("new_str")
		return h.StrReplace(ctx, path, old, repl), hasPath && hasOld
	case "insert":
		var line int64
		raw, found := fields["insert_line"]
		if !found || json.Unmarshal(raw, &line) != nil {
			return res, false
		}
		text, hasText := str("insert_text")
		return h.Insert(ctx, path, line, text), hasPath && hasText
	case "delete":
		return h.Delete(ctx, path), hasPath
	case "rename":
		oldPath, hasOld := str("old_path")
		newPath, hasNew := str("new_path")
		return h.Rename(ctx, oldPath, newPath), hasOld && hasNew
	}
	return res, false
}

// Every golden case whose input is a well-typed command gives the same
// whole Result through the typed method as through Execute, on a fresh
// store each.
func TestTypedMatchesExecute(t *testing.T) {
	ctx := t.Context()
	run := func(c memorytest.Case, typed bool) (memory.Result, bool) {
		store := blob.Store(mem.New(nil))
		for path, content := range c.Files {
			if _, err := store.Put(ctx, path[len("/memories/"):], []byte(content), blob.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
		if c.Wrap != nil {
			store = c.Wrap(store)
		}
		opts := c.Options
		opts.Logger = slog.New(slog.DiscardHandler)
		h, err := memory.New(store, opts)
		if err != nil {
			t.Fatal(err)
		}
		if typed {
			return typedCall(ctx, h, c.Input)
		}
		return h.Execute(ctx, []byte(c.Input)), true
	}
	compared := 0
	for _, c := range memorytest.Cases() {
		want := func() memory.Result { r, _ := run(c, false); return r }()
		if errors.Is(want.Err, memory.ErrInvalidInput) && want.Err.Error() != "No replacement was performed, old_str must not be empty." {
			continue // a decoding error: no typed call has it
		}
		got, ok := run(c, true)
		if !ok {
			continue
		}
		compared++
		if !reflect.DeepEqual(withoutCause(got), withoutCause(want)) {
			t.Errorf("%s: typed call\n got %+v (Err %v)\nwant %+v (Err %v)", c.Name, got, got.Err, want, want.Err)
		}
	}
	if compared < 200 {
		t.Errorf("compared only %d cases through the typed API", compared)
	}
}

// Every golden case cites a section of docs/spec.md that exists.
func TestCasesCiteSpec(t *testing.T) {
	doc, err := os.ReadFile("../docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings[h] = true
		}
	}
	for _, c := range memorytest.Cases() {
		if !headings[c.Section] {
			t.Errorf("%s cites docs/spec.md %q, which has no such section", c.Name, c.Section)
		}
	}
}

// ReadFile and Files answer each failure with an *Error of the right kind
// and the contract's text; Files never shows a reserved key.
func TestReadFileAndFiles(t *testing.T) {
	ctx := t.Context()
	inner := mem.New(nil)
	for k, v := range map[string]string{"a/x.md": "x", "a/.cloudmem/key": "secret", "a/b/.cloudmem-lock": "", "f.md": "f\x00\xff"} {
		if _, err := inner.Put(ctx, k, []byte(v), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := memory.New(inner, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := h.ReadFile(ctx, "/memories/f.md"); err != nil || string(data) != "f\x00\xff" {
		t.Errorf("ReadFile of a binary file: %q, %v", data, err)
	}
	files, err := h.Files(ctx, "/memories/a")
	if err != nil || len(files) != 1 || files[0] != (memory.FileInfo{Path: "/memories/a/x.md", Key: "a/x.md", Size: 1,
		Version: files[0].Version, Modified: files[0].Modified}) {
		t.Errorf("Files(/memories/a) = %+v, %v; want only /memories/a/x.md", files, err)
	}
	failing := blob.Store(failStore{inner})
	hf, err := memory.New(failing, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		err  error
		kind error
		text string
	}{
		{"read a directory", second(h.ReadFile(ctx, "/memories/a")), memory.ErrNotFile, "The path /memories/a is not a file."},
		{"read the root", second(h.ReadFile(ctx, "/memories")), memory.ErrNotFile, "The path /memories is not a file."},
		{"read a missing file", second(h.ReadFile(ctx, "/memories/nope")), memory.ErrNotFound, "The path /memories/nope does not exist"},
		{"read a reserved key", second(h.ReadFile(ctx, "/memories/a/.cloudmem/key")), memory.ErrInvalidPath, "Path /memories/a/.cloudmem/key is reserved"},
		{"read, storage fails", second(hf.ReadFile(ctx, "/memories/f.md")), memory.ErrStorage, "The memory storage failed: the storage backend returned an error"},
		{"files of a file", second(h.Files(ctx, "/memories/f.md")), memory.ErrNotDir, "The path /memories/f.md is a file, not a directory"},
		{"files of a missing directory", second(h.Files(ctx, "/memories/nope")), memory.ErrNotFound, "The path /memories/nope does not exist"},
		{"files of bookkeeping only", second(h.Files(ctx, "/memories/a/b")), memory.ErrNotFound, "The path /memories/a/b does not exist"},
		{"files, invalid path", second(h.Files(ctx, "/memories/../x")), memory.ErrInvalidPath, "Path /memories/../x would escape /memories directory"},
		{"files, storage fails", second(hf.Files(ctx, "/memories")), memory.ErrStorage, "The memory storage failed: the storage backend returned an error"},
	} {
		var e *memory.Error
		if !errors.As(c.err, &e) || e.Kind != c.kind || !errors.Is(c.err, c.kind) || e.Error() != c.text {
			t.Errorf("%s: %#v, want kind %v and text %q", c.name, c.err, c.kind, c.text)
		}
	}
	if _, err := hf.ReadFile(ctx, "/memories/f.md"); !errors.Is(err, errBroken) {
		t.Errorf("the storage failure's cause is not reachable: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

var errBroken = errors.New("broken store")

// failStore fails every call.
type failStore struct{ blob.Store }

func (failStore) Get(context.Context, string, int64) ([]byte, blob.Info, error) {
	return nil, blob.Info{}, errBroken
}
func (failStore) Stat(context.Context, string) (blob.Info, error) { return blob.Info{}, errBroken }
func (failStore) List(context.Context, string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, errBroken) }
}

// A mount point is a directory even when its mount holds no file
// (docs/spec.md "Mounts"): Files lists nothing under it, ReadFile answers
// that it is not a file, exactly as for a mount point that holds files.
// ReadFile refuses an object over the read limit as the commands do.
func TestReadFileAndFilesMountPoint(t *testing.T) {
	ctx := t.Context()
	team := mem.New(nil)
	if _, err := team.Put(ctx, "big.md", []byte("0123456789"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	table, err := mount.New([]mount.Mount{{Name: "empty", Store: mem.New(nil)}, {Name: "team", Store: team}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(table, memory.Options{MaxFileBytes: 4, MaxImageBytes: 4, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if files, err := h.Files(ctx, "/memories/empty"); err != nil || files == nil || len(files) != 0 {
		t.Errorf("Files(/memories/empty) = %#v, %v; want no file and no error", files, err)
	}
	for _, c := range []struct {
		name string
		err  error
		kind error
		text string
	}{
		{"read an empty mount point", second(h.ReadFile(ctx, "/memories/empty")), memory.ErrNotFile, "The path /memories/empty is not a file."},
		{"read a mount point", second(h.ReadFile(ctx, "/memories/team")), memory.ErrNotFile, "The path /memories/team is not a file."},
		{"read outside every mount", second(h.ReadFile(ctx, "/memories/nope")), memory.ErrNotFound, "The path /memories/nope does not exist"},
		{"read over the read limit", second(h.ReadFile(ctx, "/memories/team/big.md")), memory.ErrTooLarge,
			"File /memories/team/big.md is 10 bytes, over the limit of 4 bytes that a memory command reads"},
		{"files outside every mount", second(h.Files(ctx, "/memories/nope")), memory.ErrNotFound, "The path /memories/nope does not exist"},
	} {
		var e *memory.Error
		if !errors.As(c.err, &e) || e.Kind != c.kind || !errors.Is(c.err, c.kind) || e.Error() != c.text {
			t.Errorf("%s: %#v, want kind %v and text %q", c.name, c.err, c.kind, c.text)
		}
	}
}

func TestInvalidInput(t *testing.T) {
	res := memory.InvalidInput("the input is longer than 5 bytes")
	if res.Text != "Error: Invalid memory command input: the input is longer than 5 bytes" || !res.IsError || res.Image != nil {
		t.Fatalf("InvalidInput = %+v", res)
	}
	if !errors.Is(res.Err, memory.ErrInvalidInput) || res.Err.Error() != "Invalid memory command input: the input is longer than 5 bytes" {
		t.Fatalf("InvalidInput's Err = %v", res.Err)
	}
}

// TestWrite checks Write's outcomes: a new file is a counted create (the
// file limit refuses one over it), a replacement must name the file's
// current version, and each refusal is the create command's error and
// changes nothing.
func TestWrite(t *testing.T) {
	ctx := t.Context()
	store := mem.New(nil)
	h, err := memory.New(store, memory.Options{MaxFiles: 2, MaxFileBytes: 8, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, "/memories/a.md", []byte("one"), ""); err != nil {
		t.Fatal(err)
	}
	files, err := h.Files(ctx, "/memories")
	if err != nil || len(files) != 1 {
		t.Fatalf("Files: %v, %v", files, err)
	}
	v := files[0].Version
	cases := []struct {
		name      string
		path      string
		data      string
		ifVersion string
		kind      error
		text      string // "" for success
	}{
		{"exists", "/memories/a.md", "two", "", memory.ErrExists, "File /memories/a.md already exists"},
		{"under a file", "/memories/a.md/b", "two", "", memory.ErrNotDir, "The path /memories/a.md is a file, not a directory"},
		{"too large", "/memories/b.md", "123456789", "", memory.ErrTooLarge,
			"File /memories/b.md would be 9 bytes, over the limit of 8 bytes per memory file"},
		{"stale version", "/memories/a.md", "two", "not-" + v, memory.ErrConflict,
			"The file /memories/a.md was changed by another writer at the same time; no change was made. Try the command again."},
		{"the root", "/memories", "two", "", memory.ErrNotFile, "The path /memories is not a file."},
		{"replace", "/memories/a.md", "two", v, nil, ""},
		{"second file", "/memories/b.md", "x", "", nil, ""},
		{"full", "/memories/c.md", "x", "", memory.ErrFull,
			"The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first."},
	}
	for _, c := range cases {
		before := storeContents(t, store)
		version, err := h.Write(ctx, c.path, []byte(c.data), c.ifVersion)
		switch {
		case c.kind == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.kind == nil:
			key, _ := memory.Resolve(c.path)
			if info, err := store.Stat(ctx, key); err != nil || info.Version != version {
				t.Errorf("%s: Write returned the version %q, the store holds %+v (%v)", c.name, version, info, err)
			}
		case version != "":
			t.Errorf("%s: a refused Write returned the version %q", c.name, version)
		case c.kind != nil && (!errors.Is(err, c.kind) || err.Error() != c.text):
			t.Errorf("%s: %v, want %q (%v)", c.name, err, c.text, c.kind)
		case c.kind != nil && !reflect.DeepEqual(storeContents(t, store), before):
			t.Errorf("%s: a refused Write changed the store", c.name)
		}
	}
	if got, err := h.ReadFile(ctx, "/memories/a.md"); string(got) != "two" || err != nil {
		t.Errorf("a.md after its replacement: %q, %v", got, err)
	}
	if _, err := h.Write(ctx, "/memories/a.md", []byte("x"), "not-"+v); !errors.Is(err, blob.ErrPrecondition) {
		t.Errorf("a stale version: %v, want it to wrap blob.ErrPrecondition", err)
	}
	ro, err := memory.New(blob.ReadOnly(store), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Write(ctx, "/memories/z.md", []byte("x"), ""); !errors.Is(err, memory.ErrReadOnly) ||
		err.Error() != "The memory directory is read-only: write is not allowed" {
		t.Errorf("Write on a read-only store: %v", err)
	}
}

// TestRemove checks Remove's outcomes: it deletes one file, at a given
// version when one is named, never a directory, and gives its place back to
// the file limit; each refusal changes nothing.
func TestRemove(t *testing.T) {
	ctx := t.Context()
	store := mem.New(nil)
	h, err := memory.New(store, memory.Options{MaxFiles: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	va, err := h.Write(ctx, "/memories/a.md", []byte("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write(ctx, "/memories/d/b.md", []byte("two"), ""); err != nil {
		t.Fatal(err)
	}
	stale := "not-" + va
	cases := []struct {
		name      string
		path      string
		ifVersion string
		kind      error
		text      string // "" for success
	}{
		{"a directory", "/memories/d", "", memory.ErrNotFile, "The path /memories/d is not a file."},
		{"the root", "/memories/", "", memory.ErrNotFile, "The path /memories/ is not a file."},
		{"missing", "/memories/c.md", "", memory.ErrNotFound, "The path /memories/c.md does not exist"},
		{"reserved", "/memories/.cloudmem/files", "", memory.ErrInvalidPath, "Path /memories/.cloudmem/files is reserved"},
		{"stale version", "/memories/a.md", stale, memory.ErrConflict,
			"The file /memories/a.md was changed by another writer at the same time; no change was made. Try the command again."},
		{"at its version", "/memories/a.md", va, nil, ""},
		{"any version", "/memories/d/b.md", "", nil, ""},
	}
	for _, c := range cases {
		before := storeContents(t, store)
		err := h.Remove(ctx, c.path, c.ifVersion)
		switch {
		case c.kind == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.kind != nil && (!errors.Is(err, c.kind) || err.Error() != c.text):
			t.Errorf("%s: %v, want %q (%v)", c.name, err, c.text, c.kind)
		case c.kind != nil && !reflect.DeepEqual(storeContents(t, store), before):
			t.Errorf("%s: a refused Remove changed the store", c.name)
		}
	}
	if got := storeContents(t, store); len(got) != 0 {
		t.Errorf("after removing both files the store holds %v", got)
	}
	// Both places are free again: two creates fit under MaxFiles 2.
	for _, p := range []string{"/memories/x.md", "/memories/y.md"} {
		if res := h.Create(ctx, p, "x"); res.IsError {
			t.Errorf("create %s after the removes: %s", p, res.Text)
		}
	}
	ro, err := memory.New(blob.ReadOnly(store), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.Remove(ctx, "/memories/x.md", ""); !errors.Is(err, memory.ErrReadOnly) ||
		err.Error() != "The memory directory is read-only: remove is not allowed" {
		t.Errorf("Remove on a read-only store: %v", err)
	}
}

// storeContents returns every memory file of s (no bookkeeping object: a
// refused create may recount the files).
func storeContents(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, info := range infos {
		if blob.IsReserved(info.Key) {
			continue
		}
		data, _, err := s.Get(t.Context(), info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		out[info.Key] = string(data)
	}
	return out
}

// withoutCause returns r with its Err's Cause left out: the storage error
// behind a failed directory move depends on which of its calls, made 16 at
// once, failed first.
func withoutCause(r memory.Result) memory.Result {
	var e *memory.Error
	if errors.As(r.Err, &e) {
		c := *e
		c.Cause = nil
		r.Err = &c
	}
	return r
}

// TestWriteRemoveOnMounts checks the kinds Write and Remove document that
// only a mount table or a write policy gives, each with the command's text
// and nothing changed.
func TestWriteRemoveOnMounts(t *testing.T) {
	ctx := t.Context()
	strict := blob.WithPolicy(mem.New(nil), &policy.Policy{Secrets: policy.Reject})
	tb, err := mount.New([]mount.Mount{{Name: "strict", Store: strict}, {Name: "ro", Store: blob.ReadOnly(mem.New(nil))}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(tb, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	v, err := h.Write(ctx, "/memories/strict/a.md", []byte("one"), "")
	if err != nil {
		t.Fatal(err)
	}
	outside := "The path /memories/a.md is outside every mount point. Use a path inside one of: /memories/ro, /memories/strict"
	secret := "The content for /memories/strict/b.md holds a secret (aws-access-token on line 1); nothing was written. " +
		"Memory files keep no secrets: write where a secret is kept (a vault path, an environment variable's name) instead of the secret itself."
	cases := []struct {
		name string
		err  error
		kind error
		text string
	}{
		{"Write outside every mount", write2(h, "/memories/a.md", "x", ""), memory.ErrNotMounted, outside},
		{"Write a mount point", write2(h, "/memories/strict", "x", ""), memory.ErrExists, "File /memories/strict already exists"},
		{"Write a mount point at a version", write2(h, "/memories/strict", "x", v), memory.ErrExists, "File /memories/strict already exists"},
		{"Write a secret", write2(h, "/memories/strict/b.md", plantedKey, ""), memory.ErrSecret, secret},
		{"Write a read-only mount", write2(h, "/memories/ro/b.md", "x", ""), memory.ErrReadOnly,
			"The memory directory is read-only: write is not allowed"},
		{"Remove outside every mount", h.Remove(ctx, "/memories/a.md", ""), memory.ErrNotMounted, outside},
		{"Remove a mount point", h.Remove(ctx, "/memories/strict", ""), memory.ErrNotFile, "The path /memories/strict is not a file."},
		{"Remove in a read-only mount", h.Remove(ctx, "/memories/ro/b.md", ""), memory.ErrReadOnly,
			"The memory directory is read-only: remove is not allowed"},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.kind) || c.err.Error() != c.text {
			t.Errorf("%s: %v, want %q (%v)", c.name, c.err, c.text, c.kind)
		}
	}
	if got := storeContents(t, strict); !reflect.DeepEqual(got, map[string]string{"a.md": "one"}) {
		t.Errorf("the strict mount holds %v, want only a.md", got)
	}
}

// write2 is Write of text, returning its error only.
func write2(h *memory.Handler, path, text, ifVersion string) error {
	_, err := h.Write(context.Background(), path, []byte(text), ifVersion)
	return err
}
