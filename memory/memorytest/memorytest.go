// Package memorytest is the conformance suite of the memory tool handler:
// every string and rule of the memory tool contract (docs/spec.md in this
// repository) as golden cases, run through a memory.Handler over any
// blob.Store. Each group of cases cites the section of docs/spec.md it
// checks (the Section of its group, and a comment on the cases).
//
// Like testing/fstest, it exists to be imported by tests. Integration tests
// call Run and RunConcurrency with a constructor for their backend, so that
// "works on S3" means that the six commands behave as specified on S3, not
// only that the S3 store passes its own tests. Non-test code must not import
// this package.
//
// Every expected text in this package was written by hand from the contract,
// never copied from what a handler prints.
package memorytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Case is one golden case: a store holding Files, one command, and the
// whole Result it must produce.
type Case struct {
	// Name identifies the case; Cases prefixes it with its group
	// ("view/...", "create/...").
	Name string
	// Section is the heading of the section of docs/spec.md the case
	// checks ("Paths", "view", "Mounts"). Cases
	// sets it from the case's group.
	Section string
	// Files is the store's content before the command, by memory path:
	// "/memories/a/b.md" is stored under key "a/b.md". Paths under
	// "/memories/.cloudmem/" put the storage's own bookkeeping keys, which
	// no memory path can reach. Nil means an empty store.
	Files map[string]string
	// Options configures the handler. A nil Logger is replaced by one that
	// discards, so that storage-failure cases keep the test output short.
	Options memory.Options
	// Wrap, if set, wraps the store the handler sees (read-only, failing).
	// Files are written to, and the store is checked on, the unwrapped store.
	Wrap func(blob.Store) blob.Store
	// Input is the raw input object, exactly as the model sends it.
	Input string
	// Want is the whole expected Result.
	Want memory.Result
	// WantPrefix makes Want.Text a prefix of the expected text, for the
	// few texts whose end the contract leaves open (the short reason of
	// "Invalid memory command input: ..."). The rest must then be one
	// non-empty line.
	WantPrefix bool
	// WantFiles is the whole store after the command, by memory path. Nil
	// means unchanged: the same keys, contents and versions as before.
	// A case whose Want is an error must leave it nil: errors change
	// nothing.
	WantFiles map[string]string
}

// group is a named list of cases, one file of this package each, and the
// section of docs/spec.md it checks.
type group struct {
	name    string
	section string
	cases   func() []Case
}

var groups = []group{
	{"decode", "Wire form", decodeCases},
	{"paths", "Paths", pathCases},
	{"readonly", "Concurrency, limits and failures (all commands)", readOnlyCases},
	{"failure", "Concurrency, limits and failures (all commands)", failureCases},
	{"view_dir", "view", viewDirCases},
	{"view_file", "view", viewFileCases},
	{"view_limits", "view", viewLimitCases},
	{"create", "create", createCases},
	{"str_replace", "str_replace", strReplaceCases},
	{"insert", "insert", insertCases},
	{"delete", "delete", deleteCases},
	{"rename", "rename", renameCases},
}

// sectioned returns the cases of g with their Section set.
func (g group) sectioned() []Case {
	cases := g.cases()
	for i := range cases {
		if cases[i].Section == "" {
			cases[i].Section = g.section
		}
	}
	return cases
}

// Cases returns every golden case, each Name prefixed with its group and a
// slash ("view_dir/pre-order walk"). Callers may filter them, or use their
// inputs as fuzz seeds.
func Cases() []Case {
	var all []Case
	for _, g := range groups {
		for _, c := range g.sectioned() {
			c.Name = g.name + "/" + c.Name
			all = append(all, c)
		}
	}
	return all
}

// Run runs every golden case as its own subtest (grouped by command), each
// on a fresh store from newStore. newStore must return an empty store and
// arrange its cleanup with t.Cleanup. RunWith can leave cases out.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Helper()
	RunWith(t, newStore, Options{})
}

// runCase runs c on a fresh store from newStore, sending its input through
// exec, or to h.Execute when exec is nil; Result.Err, which only Execute
// returns, is checked only then.
func runCase(t *testing.T, newStore func(t *testing.T) blob.Store, c Case, exec Exec) {
	if c.Want.IsError && c.WantFiles != nil {
		t.Fatalf("memorytest: case %q expects an error and a changed store", c.Name)
	}
	ctx := t.Context()
	base := newStore(t)
	for path, content := range c.Files {
		if _, err := base.Put(ctx, keyOf(t, path), []byte(content), blob.Cond{}); err != nil {
			t.Fatalf("setup: Put %q: %v", path, err)
		}
	}
	before := snapshot(t, base)

	store := base
	if c.Wrap != nil {
		store = c.Wrap(store)
	}
	counter := blob.NewCounter(store)
	opts := c.Options
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := memory.New(counter, opts)
	if err != nil {
		t.Fatalf("memory.New: %v", err)
	}
	var got memory.Result
	if exec == nil {
		got = h.Execute(ctx, []byte(c.Input))
	} else {
		got = exec(ctx, h, []byte(c.Input))
	}

	checkResult(t, c, got, exec == nil)
	if refusedBeforeStorage(c.Want) {
		if n := counter.Counts(); n.Total() != 0 {
			t.Errorf("input %q: decoding, read-only and path errors come before any storage call; the store saw %+v", c.Input, n)
		}
	}

	after := snapshot(t, base)
	if c.WantFiles == nil {
		if diff := diffSnapshots(before, after); diff != "" {
			t.Errorf("input %q: the store changed (it must not):\n%s", c.Input, diff)
		}
		return
	}
	want := map[string]string{}
	for path, content := range c.WantFiles {
		want[keyOf(t, path)] = content
	}
	if diff := diffContents(after, want); diff != "" {
		t.Errorf("input %q: store afterwards (by key):\n%s", c.Input, diff)
	}
}

// refusedBeforeStorage reports whether want is an error the contract
// produces before any storage call: malformed input, a read-only refusal,
// or an invalid path.
func refusedBeforeStorage(want memory.Result) bool {
	if !want.IsError {
		return false
	}
	for _, p := range []string{
		"Error: Invalid memory command input: ",
		"Error: Parameter `",
		"Error: Unknown memory command: ",
		"Error: The memory directory is read-only: ",
		"Error: Path ",
	} {
		if strings.HasPrefix(want.Text, p) {
			return true
		}
	}
	return false
}

// checkResult checks got's text (or image) and error flag against c.Want,
// and Result.Err (see checkErr) when withErr is set.
func checkResult(t *testing.T, c Case, got memory.Result, withErr bool) {
	t.Helper()
	textOK := got.Text == c.Want.Text
	if c.WantPrefix {
		rest, found := strings.CutPrefix(got.Text, c.Want.Text)
		textOK = found && rest != "" && !strings.Contains(rest, "\n")
	}
	imageOK := sameImage(got.Image, c.Want.Image)
	if textOK && imageOK && got.IsError == c.Want.IsError {
		if withErr {
			checkErr(t, c, got)
		}
		return
	}
	how := "exactly"
	if c.WantPrefix {
		how = "starting with (then one non-empty line)"
	}
	t.Errorf("input %q (docs/spec.md %q)\n got: %s\nwant %s: %s%s",
		c.Input, c.Section, describe(got), how, describe(c.Want), firstDifference(got.Text, c.Want.Text))
}

// checkErr checks Result.Err against the (already matching) text: nil on
// success; otherwise an *memory.Error whose text is Text without "Error: "
// and whose Kind is the one the contract's text names.
func checkErr(t *testing.T, c Case, got memory.Result) {
	t.Helper()
	if !got.IsError {
		if got.Err != nil {
			t.Errorf("input %q: success with Err = %v, want nil", c.Input, got.Err)
		}
		return
	}
	var e *memory.Error
	if !errors.As(got.Err, &e) {
		t.Errorf("input %q: Err = %#v, want a *memory.Error", c.Input, got.Err)
		return
	}
	if want := strings.TrimPrefix(got.Text, "Error: "); e.Error() != want {
		t.Errorf("input %q: Err.Error() = %q, want %q", c.Input, e.Error(), want)
	}
	if want := kindOf(got.Text); !errors.Is(got.Err, want) || e.Kind != want {
		t.Errorf("input %q: Err.Kind = %v, want %v", c.Input, e.Kind, want)
	}
}

// kindOf is the memory.Err* kind of an error text of the contract
// (docs/spec.md), recognised by its fixed words.
func kindOf(text string) error {
	msg := strings.TrimPrefix(text, "Error: ")
	has := func(prefix, suffix string) bool {
		return strings.HasPrefix(msg, prefix) && strings.HasSuffix(msg, suffix)
	}
	switch {
	case has("Invalid memory command input: ", ""), has("Parameter `", ""), has("Unknown memory command: ", ""),
		msg == "No replacement was performed, old_str must not be empty.":
		return memory.ErrInvalidInput
	case has("The memory directory is read-only: ", " is not allowed"), has("Cannot move ", " is read-only"):
		return memory.ErrReadOnly
	case has("Cannot delete the mount point ", ""), has("Cannot rename the mount point ", ""):
		return memory.ErrMountPoint
	case has("The path ", "") && strings.Contains(msg, " is outside every mount point. Use a path inside one of: "):
		return memory.ErrNotMounted
	case has("Path ", ""):
		return memory.ErrInvalidPath
	case has("The memory storage failed: ", ""):
		return memory.ErrStorage
	case has("The file ", "; no change was made. Try the command again."):
		return memory.ErrConflict
	case has("The file ", " is not a UTF-8 text file"):
		return memory.ErrNotText
	case has("The path ", " is not a file."):
		return memory.ErrNotFile
	case has("The path ", " is a file, not a directory"):
		return memory.ErrNotDir
	case has("The path ", " does not exist"), has("The path ", " does not exist. Please provide a valid path."):
		return memory.ErrNotFound
	case has("Invalid `view_range` parameter: ", " lines"), has("Invalid `insert_line` parameter: ", "]"):
		return memory.ErrOutOfRange
	case has("File ", " lines."), has("Image ", " bytes per image"), has("File ", " bytes per memory file"),
		has("File ", " bytes that a memory command reads"):
		return memory.ErrTooLarge
	case has("File ", " already exists"), has("The destination ", " already exists"):
		return memory.ErrExists
	case has("The memory directory is full: ", " Delete or merge files first."):
		return memory.ErrFull
	case has("No replacement was performed, old_str `", "."):
		return memory.ErrNoMatch
	case has("No replacement was performed. Multiple occurrences of old_str `", ". Please ensure it is unique"):
		return memory.ErrAmbiguous
	case msg == "Cannot delete the /memories directory itself", msg == "Cannot rename the /memories directory itself":
		return memory.ErrRoot
	case has("Cannot move ", ")"):
		return memory.ErrIntoItself
	}
	return fmt.Errorf("memorytest: no kind for the text %q", text)
}

func sameImage(a, b *memory.Image) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.MediaType == b.MediaType && bytes.Equal(a.Data, b.Data)
}

func describe(r memory.Result) string {
	s := fmt.Sprintf("IsError=%v Text=%q", r.IsError, r.Text)
	if r.Image != nil {
		s += fmt.Sprintf(" Image={%q, %d bytes}", r.Image.MediaType, len(r.Image.Data))
	}
	return s
}

// firstDifference points at the first line where two long texts differ, to
// save reading two long %q strings side by side.
func firstDifference(got, want string) string {
	if got == want || len(want) < 200 {
		return ""
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		gl, wl := "<none>", "<none>"
		if i < len(g) {
			gl = fmt.Sprintf("%q", g[i])
		}
		if i < len(w) {
			wl = fmt.Sprintf("%q", w[i])
		}
		if gl != wl {
			return fmt.Sprintf("\nfirst difference at line %d:\n got: %s\nwant: %s", i+1, gl, wl)
		}
	}
	return ""
}

// keyOf maps a memory path of the test data to its store key.
func keyOf(t *testing.T, path string) string {
	t.Helper()
	key, ok := strings.CutPrefix(path, "/memories/")
	if !ok || blob.CheckKey(key) != nil {
		t.Fatalf("memorytest: bad test path %q", path)
	}
	return key
}

type object struct{ data, version string }

// snapshot reads every key of s with its content and version, except the
// handler's own bookkeeping (memory.IsBookkeeping: its file count, which a
// command may write even when it fails as full, and its witnesses).
func snapshot(t *testing.T, s blob.Store) map[string]object {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		t.Fatalf("snapshot: List: %v", err)
	}
	out := make(map[string]object, len(infos))
	for _, info := range infos {
		if memory.IsBookkeeping(info.Key) {
			continue // the handler's own bookkeeping
		}
		data, got, err := s.Get(ctx, info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatalf("snapshot: Get %q: %v", info.Key, err)
		}
		out[info.Key] = object{data: string(data), version: got.Version}
	}
	return out
}

func diffSnapshots(before, after map[string]object) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(mergeKeys(before, after))) {
		o, inBefore := before[k]
		n, inAfter := after[k]
		switch {
		case !inAfter:
			fmt.Fprintf(&b, "  %q: deleted (was %s)\n", k, short(o.data))
		case !inBefore:
			fmt.Fprintf(&b, "  %q: created with %s\n", k, short(n.data))
		case o.data != n.data:
			fmt.Fprintf(&b, "  %q: content %s, was %s\n", k, short(n.data), short(o.data))
		case o.version != n.version:
			fmt.Fprintf(&b, "  %q: rewritten (version %q, was %q) with the same content\n", k, n.version, o.version)
		}
	}
	return b.String()
}

func diffContents(got map[string]object, want map[string]string) string {
	var b strings.Builder
	all := mergeKeys(got, nil)
	for k := range want {
		all[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(all)) {
		g, inGot := got[k]
		w, inWant := want[k]
		switch {
		case !inGot:
			fmt.Fprintf(&b, "  %q: missing, want %s\n", k, short(w))
		case !inWant:
			fmt.Fprintf(&b, "  %q: unexpected, holds %s\n", k, short(g.data))
		case g.data != w:
			fmt.Fprintf(&b, "  %q:\n     got %s\n    want %s\n", k, short(g.data), short(w))
		}
	}
	return b.String()
}

func mergeKeys(a, b map[string]object) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// short quotes data, eliding the middle of long contents.
func short(data string) string {
	if len(data) <= 300 {
		return fmt.Sprintf("%q", data)
	}
	return fmt.Sprintf("%q ... %q (%d bytes)", data[:120], data[len(data)-120:], len(data))
}

// The helpers below keep the case tables close to the contract's text.

// same reports whether two Results are the same: text, image and flag, and
// for errors the same text and Kind in Err.
func same(a, b memory.Result) bool {
	if a.Text != b.Text || a.IsError != b.IsError || !sameImage(a.Image, b.Image) || (a.Err == nil) != (b.Err == nil) {
		return false
	}
	if a.Err == nil {
		return true
	}
	var ea, eb *memory.Error
	return errors.As(a.Err, &ea) && errors.As(b.Err, &eb) && ea.Kind == eb.Kind && ea.Msg == eb.Msg
}

// ok is a success result.
func ok(text string) memory.Result { return memory.Result{Text: text} }

// fail is an error result; text is written without the "Error: " prefix,
// as the contract writes it.
func fail(text string) memory.Result {
	return memory.Result{Text: "Error: " + text, IsError: true, Err: &memory.Error{Kind: kindOf(text), Msg: text}}
}

// listing is a directory view of dir (the normalised path) with its lines.
func listing(dir string, lines ...string) string {
	return "Here're the files and directories up to 2 levels deep in " + dir +
		", excluding hidden items and node_modules:\n" + strings.Join(lines, "\n")
}

// fileView is a file view of path (as sent) whose lines are numbered from first.
func fileView(path string, first int, lines ...string) string {
	return "Here's the content of " + path + " with line numbers:\n" + numbered(first, lines...)
}

// numbered formats lines as the view does: the number right-aligned in six
// columns, a tab, the line; joined by "\n" with no final newline.
func numbered(first int, lines ...string) string {
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%6d\t%s", first+i, line)
	}
	return b.String()
}

// in builds an input object from name, value pairs, in that order. Values
// are encoded as JSON; a value of type raw is inserted as is.
func in(pairs ...any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < len(pairs); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:", pairs[i].(string))
		if r, isRaw := pairs[i+1].(raw); isRaw {
			b.WriteString(string(r))
			continue
		}
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(pairs[i+1]); err != nil {
			panic(fmt.Sprintf("memorytest: encoding %v: %v", pairs[i+1], err))
		}
		b.WriteString(strings.TrimSuffix(v.String(), "\n"))
	}
	b.WriteByte('}')
	return b.String()
}

// raw is JSON text that in inserts verbatim.
type raw string

// files builds a Files or WantFiles map from path, content pairs.
func files(pairs ...string) map[string]string {
	m := make(map[string]string, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		m[pairs[i]] = pairs[i+1]
	}
	return m
}
