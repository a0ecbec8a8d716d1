package memory_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// plainStore hides every optional capability of the store it embeds, so
// that blob.Rename and blob.DeleteTree take their portable fallbacks.
type plainStore struct{ blob.Store }

// quiet is a Logger for handlers whose storage failures are expected.
var quiet = slog.New(slog.DiscardHandler)

// seed writes files (store key → content) straight into s.
func seed(t testing.TB, s blob.Store, files map[string]string) {
	t.Helper()
	for key, content := range files {
		if _, err := s.Put(context.Background(), key, []byte(content), blob.Cond{}); err != nil {
			t.Fatalf("seed %q: %v", key, err)
		}
	}
}

// contents reads back every key of s with its content.
func contents(t testing.TB, s blob.Store) map[string]string {
	t.Helper()
	ctx := context.Background()
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	out := map[string]string{}
	for _, info := range infos {
		data, _, err := s.Get(ctx, info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatalf("Get %q: %v", info.Key, err)
		}
		out[info.Key] = string(data)
	}
	return out
}

// manyFiles returns n files dir/f0000.md ... with one-byte contents.
func manyFiles(dir string, n int) map[string]string {
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("%s/f%04d.md", dir, i)] = "x"
	}
	return files
}

// The storage calls each command makes, exactly. These rows are the table
// in the package documentation ("Storage calls"); a change that adds a call
// must change both.
func TestStorageCalls(t *testing.T) {
	base := map[string]string{
		"notes/a.md":     "alpha\nbeta\n",
		"notes/b.md":     "bee\n",
		"notes/sub/c.md": "see\n",
		"ab.md":          "not under notes",
	}
	dir5 := manyFiles("proj", 5)
	type row struct {
		name   string
		files  map[string]string // besides base
		opts   memory.Options
		input  string
		text   string      // the whole expected Result.Text
		calls  blob.Counts // on both stores, unless mem and plain are set
		mem    blob.Counts // over mem.New (blob.Tree)
		plain  blob.Counts // over a store without capabilities
		prefix []string    // if set, the List prefixes, in order (mem)
	}
	rows := []row{
		{name: "view file", input: `{"command":"view","path":"/memories/notes/b.md"}`,
			text:  "Here's the content of /memories/notes/b.md with line numbers:\n     1\tbee\n     2\t",
			calls: blob.Counts{Get: 1}},
		{name: "view directory", input: `{"command":"view","path":"/memories/notes"}`,
			text: "Here're the files and directories up to 2 levels deep in /memories/notes, excluding hidden items and node_modules:\n" +
				"19B\t/memories/notes\n11B\t/memories/notes/a.md\n4B\t/memories/notes/b.md\n4B\t/memories/notes/sub/\n4B\t/memories/notes/sub/c.md",
			prefix: []string{"notes/"},
			calls:  blob.Counts{Get: 1, List: 1}},
		{name: "view root", input: `{"command":"view","path":"/memories/"}`,
			text: "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
				"34B\t/memories\n15B\t/memories/ab.md\n19B\t/memories/notes/\n11B\t/memories/notes/a.md\n4B\t/memories/notes/b.md\n4B\t/memories/notes/sub/",
			prefix: []string{""},
			calls:  blob.Counts{List: 1}},
		{name: "view missing", input: `{"command":"view","path":"/memories/nope"}`,
			text:  "Error: The path /memories/nope does not exist. Please provide a valid path.",
			calls: blob.Counts{Get: 1, List: 1}},
		{name: "view directory of 1000 files", files: manyFiles("big", 1000), input: `{"command":"view","path":"/memories/big"}`,
			calls: blob.Counts{Get: 1, List: 1}},
		// With the file count kept, far from the limit: Get the count (a
		// handler's first command; TestStorageCallsRemembered has the
		// next), then Put the file and the count at once, then settle's
		// look: List the key's directory and Stat its ancestor at once.
		{name: "create", files: counted(4), input: `{"command":"create","path":"/memories/notes/new.md","file_text":"n"}`,
			text: "File created successfully at: /memories/notes/new.md", prefix: []string{"notes/new.md/"},
			calls: blob.Counts{Get: 1, Stat: 1, List: 1, Put: 2}},
		// The same calls however many files the store holds.
		{name: "create among 1000 files", files: with(manyFiles("big", 1000), counted(1004)),
			input: `{"command":"create","path":"/memories/notes/new.md","file_text":"n"}`,
			text:  "File created successfully at: /memories/notes/new.md", prefix: []string{"notes/new.md/"},
			calls: blob.Counts{Get: 1, Stat: 1, List: 1, Put: 2}},
		// The first create on a store without a count takes the slow path:
		// it probes (Stat the key and its ancestor, List its directory),
		// lists the store once, writes the count with its reservation, the
		// file, the count confirmed, and looks (List, Stat).
		{name: "create, first on the store", input: `{"command":"create","path":"/memories/notes/new.md","file_text":"n"}`,
			text: "File created successfully at: /memories/notes/new.md", prefix: []string{"notes/new.md/", "", "notes/new.md/"},
			calls: blob.Counts{Get: 1, Stat: 3, List: 3, Put: 3}},
		// Within 16 files of the limit: the count read first, then the
		// probes, the reservation, the file, the count confirmed and the
		// look.
		{name: "create near the limit", opts: memory.Options{MaxFiles: 10}, files: kept(4),
			input: `{"command":"create","path":"/memories/notes/new.md","file_text":"n"}`,
			text:  "File created successfully at: /memories/notes/new.md", prefix: []string{"notes/new.md/", "notes/new.md/"},
			calls: blob.Counts{Get: 1, Stat: 3, List: 2, Put: 3}},
		// A store full by a count that nothing changed since it was
		// listed: refused with no listing of the store (Get the count,
		// Stat the key and its ancestor, List its directory).
		{name: "create in a full store", opts: memory.Options{MaxFiles: 4}, files: counted(4),
			input:  `{"command":"create","path":"/memories/notes/new.md","file_text":"n"}`,
			text:   "Error: The memory directory is full: it holds 4 files, the limit is 4. Delete or merge files first.",
			prefix: []string{"notes/new.md/"},
			calls:  blob.Counts{Get: 1, Stat: 2, List: 1}},
		// Put the file, then look (List, Stat).
		{name: "create without file limit", opts: memory.Options{MaxFiles: -1},
			input: `{"command":"create","path":"/memories/notes/new.md","file_text":"n"}`,
			text:  "File created successfully at: /memories/notes/new.md", prefix: []string{"notes/new.md/"},
			calls: blob.Counts{Stat: 1, List: 1, Put: 1}},
		// The same calls however many files the directory holds.
		{name: "create without file limit among 1000 files", opts: memory.Options{MaxFiles: -1}, files: manyFiles("notes", 1000),
			input: `{"command":"create","path":"/memories/notes/new.md","file_text":"n"}`,
			text:  "File created successfully at: /memories/notes/new.md", prefix: []string{"notes/new.md/"},
			calls: blob.Counts{Stat: 1, List: 1, Put: 1}},
		{name: "create overwriting", opts: memory.Options{Overwrite: true},
			input: `{"command":"create","path":"/memories/notes/a.md","file_text":"n"}`,
			text:  "File created successfully at: /memories/notes/a.md",
			calls: blob.Counts{Stat: 2, Put: 1}},
		{name: "str_replace", input: `{"command":"str_replace","path":"/memories/notes/a.md","old_str":"beta","new_str":"gamma"}`,
			text: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
				"     1\talpha\n     2\tgamma\n     3\t",
			calls: blob.Counts{Get: 1, Put: 1}},
		{name: "insert", input: `{"command":"insert","path":"/memories/notes/a.md","insert_line":1,"insert_text":"x"}`,
			text:  "The file /memories/notes/a.md has been edited.",
			calls: blob.Counts{Get: 1, Put: 1}},
		{name: "str_replace on a directory", input: `{"command":"str_replace","path":"/memories/notes","old_str":"a"}`,
			text: "Error: The path /memories/notes is not a file.", prefix: []string{"notes/"},
			calls: blob.Counts{Get: 1, List: 1}},
		// Delete, and Get the count at once (the next create lowers it).
		{name: "delete file", files: kept(4), input: `{"command":"delete","path":"/memories/notes/a.md"}`,
			text:  "Successfully deleted /memories/notes/a.md",
			calls: blob.Counts{Get: 1, Delete: 1}},
		// A count as a recount left it is then marked changed (a Put).
		{name: "delete file, count just recounted", files: counted(4), input: `{"command":"delete","path":"/memories/notes/a.md"}`,
			text:  "Successfully deleted /memories/notes/a.md",
			calls: blob.Counts{Get: 1, Delete: 1, Put: 1}},
		// Delete finds no file, and a List nothing.
		{name: "delete missing", files: kept(4), input: `{"command":"delete","path":"/memories/nope"}`,
			text:  "Error: The path /memories/nope does not exist",
			calls: blob.Counts{Get: 1, Delete: 1, List: 1}},
		// The fast path's Put(IfAbsent) fails, so its count is taken back;
		// the probe (Stat the key and its ancestor) words the answer.
		{name: "create existing", files: kept(4), input: `{"command":"create","path":"/memories/notes/a.md","file_text":"n"}`,
			text:  "Error: File /memories/notes/a.md already exists",
			calls: blob.Counts{Get: 1, Stat: 2, Put: 3}},
		{name: "delete file, no count", input: `{"command":"delete","path":"/memories/notes/a.md"}`,
			text:  "Successfully deleted /memories/notes/a.md",
			calls: blob.Counts{Get: 1, Delete: 1}},
		// A directory: Delete (finds no file) and Get the count at once, a
		// List finds its files, then DeleteTree, or its fallback (a List and
		// a Delete per file), a List proves nothing is left, and the count,
		// as a recount left it, is marked changed (a Put).
		{name: "delete directory", files: counted(4), input: `{"command":"delete","path":"/memories/notes"}`,
			text: "Successfully deleted /memories/notes",
			mem:  blob.Counts{Get: 1, Delete: 1, List: 2, DeleteTree: 1, Put: 1}, plain: blob.Counts{Get: 1, Delete: 4, List: 3, Put: 1}},
		// The fallback: Get the source, List the destination tree, Put the
		// copy, Delete the source. Once it has written, a move looks for a
		// create that raced it, as a create does (neither store keeps names
		// exclusive): after a file's Rename, Stat the new name and, a file,
		// List beneath it; after a file's copy, List beneath it.
		{name: "rename file in its directory", input: `{"command":"rename","old_path":"/memories/notes/a.md","new_path":"/memories/notes/z.md"}`,
			text: "Successfully renamed /memories/notes/a.md to /memories/notes/z.md",
			mem:  blob.Counts{Rename: 1, Stat: 1, List: 1}, plain: blob.Counts{Get: 1, List: 2, Put: 1, Delete: 1}},
		{name: "rename file to an ancestor", input: `{"command":"rename","old_path":"/memories/notes/sub/c.md","new_path":"/memories/c.md"}`,
			text: "Successfully renamed /memories/notes/sub/c.md to /memories/c.md",
			mem:  blob.Counts{Rename: 1, Stat: 1, List: 1}, plain: blob.Counts{Get: 1, List: 2, Put: 1, Delete: 1}},
		// Probes in SPEC order: the source exists (Stat), the destination does
		// not (Stat, List), its ancestors x and x/y are no files (Stat each);
		// after the write, the look: x and x/y again, and the new name.
		{name: "rename file to another directory", input: `{"command":"rename","old_path":"/memories/notes/a.md","new_path":"/memories/x/y/a.md"}`,
			text: "Successfully renamed /memories/notes/a.md to /memories/x/y/a.md",
			mem:  blob.Counts{Stat: 7, List: 2, Rename: 1}, plain: blob.Counts{Stat: 6, List: 3, Get: 1, Put: 1, Delete: 1}},
		// The fallback for a directory: Get (no such file), List the sources,
		// Stat and List the destination, then Get, Put and Delete each file,
		// and a List proves nothing is left. The look after the write: a
		// Stat of the new name (no file may be there).
		{name: "rename 5-file directory", files: dir5, input: `{"command":"rename","old_path":"/memories/proj","new_path":"/memories/old-proj"}`,
			text: "Successfully renamed /memories/proj to /memories/old-proj",
			mem:  blob.Counts{Rename: 1, Stat: 1}, plain: blob.Counts{Get: 6, List: 3, Stat: 2, Put: 5, Delete: 5}},
		{name: "read-only refusal", opts: memory.Options{ReadOnly: true}, input: `{"command":"delete","path":"/memories/notes"}`,
			text:  "Error: The memory directory is read-only: delete is not allowed",
			calls: blob.Counts{}},
	}
	for _, kind := range []string{"mem", "plain"} {
		for _, r := range rows {
			t.Run(kind+"/"+r.name, func(t *testing.T) {
				inner := mem.New(nil)
				seed(t, inner, base)
				seed(t, inner, r.files)
				var store blob.Store = inner
				want := r.mem
				if kind == "plain" {
					store, want = plainStore{inner}, r.plain
				}
				if r.mem == (blob.Counts{}) && r.plain == (blob.Counts{}) {
					want = r.calls
				}
				rec := &listRecorder{Store: store}
				if kind == "plain" {
					store = rec // still capability-less
				} else {
					store = recordingMem{rec}
				}
				counter := blob.NewCounter(store)
				opts := r.opts
				opts.Logger = quiet
				h, err := memory.New(counter, opts)
				if err != nil {
					t.Fatal(err)
				}
				got := h.Execute(t.Context(), []byte(r.input))
				if r.text != "" && got.Text != r.text {
					t.Errorf("text:\n got %q\nwant %q", got.Text, r.text)
				}
				if r.text == "" && got.IsError {
					t.Errorf("unexpected error: %q", got.Text)
				}
				if c := counter.Counts(); c != want {
					t.Errorf("calls: got %+v, want %+v", c, want)
				}
				if r.prefix != nil && kind == "mem" && !slices.Equal(rec.prefixes(), r.prefix) {
					t.Errorf("List prefixes: got %q, want %q", rec.prefixes(), r.prefix)
				}
			})
		}
	}
}

// counted is the file count object (memory.FileCountKey) of a store of n
// files, as a recount leaves it.
func counted(n int) map[string]string {
	return map[string]string{memory.FileCountKey: fmt.Sprintf(`{"files":%d,"token":"t0","counted":true}`, n)}
}

// kept is the file count object of a store of n files, as creates and
// deletes leave it (changed since its last recount).
func kept(n int) map[string]string {
	return map[string]string{memory.FileCountKey: fmt.Sprintf(`{"files":%d,"token":"t0","counted":false}`, n)}
}

// with merges file maps.
func with(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// listRecorder records the prefixes it is asked to List.
type listRecorder struct {
	blob.Store
	mu   sync.Mutex
	seen []string
}

func (l *listRecorder) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	l.mu.Lock()
	l.seen = append(l.seen, prefix)
	l.mu.Unlock()
	return l.Store.List(ctx, prefix)
}

func (l *listRecorder) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = nil
}

func (l *listRecorder) prefixes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// recordingMem is a listRecorder over mem that keeps mem's capabilities.
type recordingMem struct{ *listRecorder }

func (r recordingMem) Rename(ctx context.Context, src, dst string) error {
	return r.Store.(blob.Tree).Rename(ctx, src, dst)
}

func (r recordingMem) DeleteTree(ctx context.Context, dir string) error {
	return r.Store.(blob.Tree).DeleteTree(ctx, dir)
}

// create without the file limit lists only the first path segment, and must
// not take keys that merely share its string prefix for its own.
func TestCreateWithoutLimitIgnoresPrefixSiblings(t *testing.T) {
	s := mem.New(nil)
	seed(t, s, map[string]string{"a.md.bak": "x", "a.mdx/y": "x", "b": "file"})
	h, err := memory.New(s, memory.Options{MaxFiles: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ input, want string }{
		{`{"command":"create","path":"/memories/a.md","file_text":"new"}`, "File created successfully at: /memories/a.md"},
		{`{"command":"create","path":"/memories/a.md","file_text":"again"}`, "Error: File /memories/a.md already exists"},
		{`{"command":"create","path":"/memories/a.mdx","file_text":"x"}`, "Error: File /memories/a.mdx already exists"},
		{`{"command":"create","path":"/memories/b/c/d.md","file_text":"x"}`, "Error: The path /memories/b is a file, not a directory"},
	} {
		if got := h.Execute(t.Context(), []byte(c.input)); got.Text != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.input, got.Text, c.want)
		}
	}
}

// rivalStore simulates another writer: before each of the first `rivals`
// conditional Puts of a memory file it passes on, it rewrites the key
// itself with edit. Writes of reserved keys (the file count) pass.
type rivalStore struct {
	blob.Store
	mu     sync.Mutex
	rivals int
	edit   func(old string) string
}

func (r *rivalStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	r.mu.Lock()
	if r.rivals > 0 && !blob.IsReserved(key) {
		r.rivals--
		old, _, err := r.Store.Get(ctx, key, blob.MaxObjectBytes)
		if err != nil && !errors.Is(err, blob.ErrNotExist) {
			r.mu.Unlock()
			return blob.Info{}, err
		}
		if _, err := r.Store.Put(ctx, key, []byte(r.edit(string(old))), blob.Cond{}); err != nil {
			r.mu.Unlock()
			return blob.Info{}, err
		}
	}
	r.mu.Unlock()
	return r.Store.Put(ctx, key, data, c)
}

// A write that loses a race is re-applied to the other writer's content;
// one that loses every race changes nothing and says so.
func TestConflictRetries(t *testing.T) {
	appendLine := func(old string) string { return old + "rival\n" }
	shrink := func(string) string { return "one\n" }
	cases := []struct {
		name   string
		rivals int
		edit   func(string) string
		input  string
		want   string
		file   string // a.md afterwards
		calls  blob.Counts
	}{
		{"str_replace re-applied", 1, appendLine, `{"command":"str_replace","path":"/memories/a.md","old_str":"one","new_str":"ONE"}`,
			"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tONE\n     2\ttwo\n     3\trival",
			"ONE\ntwo\nrival\n", blob.Counts{Get: 2, Put: 2}},
		{"str_replace matches re-checked", 1, shrink, `{"command":"str_replace","path":"/memories/a.md","old_str":"two","new_str":"2"}`,
			"Error: No replacement was performed, old_str `two` did not appear verbatim in /memories/a.md.",
			"one\n", blob.Counts{Get: 2, Put: 1}},
		{"insert re-applied", 2, appendLine, `{"command":"insert","path":"/memories/a.md","insert_line":2,"insert_text":"mine"}`,
			"The file /memories/a.md has been edited.", "one\ntwo\nmine\nrival\nrival\n", blob.Counts{Get: 3, Put: 3}},
		{"insert range re-checked", 1, shrink, `{"command":"insert","path":"/memories/a.md","insert_line":2,"insert_text":"mine"}`,
			"Error: Invalid `insert_line` parameter: 2. It should be within the range of lines of the file: [0, 1]",
			"one\n", blob.Counts{Get: 2, Put: 1}},
		{"create overwriting re-applied", 1, appendLine, `{"command":"create","path":"/memories/a.md","file_text":"mine"}`,
			"File created successfully at: /memories/a.md", "mine", blob.Counts{Stat: 2, Put: 2}},
		{"gives up after the retries", 3, appendLine, `{"command":"str_replace","path":"/memories/a.md","old_str":"one","new_str":"ONE"}`,
			"Error: The file /memories/a.md was changed by another writer at the same time; no change was made. Try the command again.",
			"one\ntwo\nrival\nrival\nrival\n", blob.Counts{Get: 3, Put: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inner := mem.New(nil)
			seed(t, inner, map[string]string{"a.md": "one\ntwo\n"})
			counter := blob.NewCounter(&rivalStore{Store: inner, rivals: c.rivals, edit: c.edit})
			h, err := memory.New(counter, memory.Options{Retries: 2, Overwrite: true, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Execute(t.Context(), []byte(c.input)); got.Text != c.want {
				t.Errorf("text:\n got %q\nwant %q", got.Text, c.want)
			}
			if got := contents(t, inner)["a.md"]; got != c.file {
				t.Errorf("a.md: got %q, want %q", got, c.file)
			}
			if got := counter.Counts(); got != c.calls {
				t.Errorf("calls: got %+v, want %+v", got, c.calls)
			}
		})
	}
}

// create without Overwrite never replaces a file another writer created
// between its checks and its Put, and gives back the count it reserved.
func TestCreateLosesRaceToRival(t *testing.T) {
	inner := mem.New(nil)
	h, err := memory.New(&rivalStore{Store: inner, rivals: 1, edit: func(string) string { return "theirs" }}, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	got := h.Execute(t.Context(), []byte(`{"command":"create","path":"/memories/a.md","file_text":"mine"}`))
	if want := "Error: File /memories/a.md already exists"; got.Text != want {
		t.Errorf("got %q, want %q", got.Text, want)
	}
	got2 := contents(t, inner)
	count := got2[memory.FileCountKey]
	delete(got2, memory.FileCountKey)
	if !maps.Equal(got2, map[string]string{"a.md": "theirs"}) {
		t.Errorf("store: %q", got2)
	}
	if !strings.HasPrefix(count, `{"files":0,`) {
		t.Errorf("file count %q, want 0 files: the reservation is given back", count)
	}
}

// Many handlers inserting into one file at once: every insert reported done
// is in the file, exactly once, and every one reported failed is not.
func TestConcurrentInsertsLoseNothing(t *testing.T) {
	s := mem.New(nil)
	seed(t, s, map[string]string{"log.md": ""})
	const writers, each = 8, 10
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done = map[string]bool{}
	)
	for w := range writers {
		wg.Go(func() {
			h, err := memory.New(s, memory.Options{Retries: 20, Logger: quiet})
			if err != nil {
				t.Error(err)
				return
			}
			for i := range each {
				line := fmt.Sprintf("w%d-%d", w, i)
				r := h.Execute(t.Context(), fmt.Appendf(nil, `{"command":"insert","path":"/memories/log.md","insert_line":0,"insert_text":%q}`, line))
				mu.Lock()
				done[line] = !r.IsError
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(contents(t, s)["log.md"], "\n"), "\n")
	count := map[string]int{}
	for _, line := range got {
		count[line]++
	}
	for line, ok := range done {
		want := 0
		if ok {
			want = 1
		}
		if count[line] != want {
			t.Errorf("%s: reported done=%v, found %d times in the file", line, ok, count[line])
		}
	}
	if len(got) > writers*each {
		t.Errorf("the file has %d lines, more than the %d inserts", len(got), writers*each)
	}
}

// New refuses a nil store and limits that cannot mean anything; it makes
// no storage call either way.
func TestNewValidatesOptions(t *testing.T) {
	counter := blob.NewCounter(mem.New(nil))
	for _, c := range []struct {
		store blob.Store
		opts  memory.Options
		want  string
	}{
		{nil, memory.Options{}, "memory: nil store"},
		{counter, memory.Options{MaxFileBytes: -1}, "memory: MaxFileBytes is -1, must not be negative"},
		{counter, memory.Options{MaxImageBytes: -5}, "memory: MaxImageBytes is -5, must not be negative"},
		{counter, memory.Options{MaxLines: -1}, "memory: MaxLines is -1, must not be negative"},
	} {
		h, err := memory.New(c.store, c.opts)
		if h != nil || err == nil || err.Error() != c.want {
			t.Errorf("New(%v, %+v) = %v, %v; want nil, %q", c.store, c.opts, h, err, c.want)
		}
	}
	for _, opts := range []memory.Options{{}, {MaxFiles: -1, ViewLimit: -1, Retries: -1}} {
		if _, err := memory.New(counter, opts); err != nil {
			t.Errorf("New(%+v): %v", opts, err)
		}
	}
	if n := counter.Counts(); n.Total() != 0 {
		t.Errorf("New made storage calls: %+v", n)
	}
}

// Retries < 0 means one attempt: the first lost race is final.
func TestNoRetries(t *testing.T) {
	inner := mem.New(nil)
	seed(t, inner, map[string]string{"a.md": "one\n"})
	counter := blob.NewCounter(&rivalStore{Store: inner, rivals: 1, edit: func(old string) string { return old + "rival\n" }})
	h, err := memory.New(counter, memory.Options{Retries: -1, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	got := h.Execute(t.Context(), []byte(`{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":"x"}`))
	want := "Error: The file /memories/a.md was changed by another writer at the same time; no change was made. Try the command again."
	if got.Text != want {
		t.Errorf("got %q, want %q", got.Text, want)
	}
	if c := counter.Counts(); c != (blob.Counts{Get: 1, Put: 1}) {
		t.Errorf("calls: %+v, want one Get and one Put", c)
	}
}

// A handler's next commands at the same scope write the count it
// remembers without reading it: a create is its Put and the count's at
// once, then its look (a List, and a Stat per ancestor); a file delete far
// from the limit is its Delete alone, and the next create takes the deleted
// file off the count in its own write.
func TestStorageCallsRemembered(t *testing.T) {
	inner := mem.New(nil)
	seed(t, inner, with(manyFiles("notes", 3), kept(3)))
	counter := blob.NewCounter(inner)
	h := newHandler(t, counter, memory.Options{})
	if r := h.Create(t.Context(), "/memories/first.md", "x"); r.IsError {
		t.Fatal(r.Text)
	}
	steps := []struct {
		name  string
		run   func() memory.Result
		text  string
		calls blob.Counts
	}{
		{"create at the root", func() memory.Result { return h.Create(t.Context(), "/memories/top.md", "x") },
			"File created successfully at: /memories/top.md", blob.Counts{Put: 2, List: 1}},
		{"create in a directory", func() memory.Result { return h.Create(t.Context(), "/memories/notes/new.md", "x") },
			"File created successfully at: /memories/notes/new.md", blob.Counts{Put: 2, List: 1, Stat: 1}},
		{"delete file", func() memory.Result { return h.Delete(t.Context(), "/memories/notes/new.md") },
			"Successfully deleted /memories/notes/new.md", blob.Counts{Delete: 1}},
		{"create after the delete", func() memory.Result { return h.Create(t.Context(), "/memories/again.md", "x") },
			"File created successfully at: /memories/again.md", blob.Counts{Put: 2, List: 1}},
	}
	for _, st := range steps {
		counter.Reset()
		if got := st.run(); got.Text != st.text {
			t.Errorf("%s: got %q, want %q", st.name, got.Text, st.text)
		}
		if got := counter.Counts(); got != st.calls {
			t.Errorf("%s: calls %+v, want %+v", st.name, got, st.calls)
		}
	}
	if st, ok := readCount(t, inner, memory.FileCountKey); !ok || st.Files != len(memoryFiles(t, inner, "")) {
		t.Errorf("the count says %d files (found: %v), the store holds %d", st.Files, ok, len(memoryFiles(t, inner, "")))
	}
}

// On the file store, which refuses a file and a directory of one name
// itself (blob.Traits.ExclusiveNames), a rename into another directory is
// one Rename: the probes run only after a refusal, to word it in SPEC's
// order, and a refused rename changes nothing.
func TestFileStoreRenameCalls(t *testing.T) {
	counter := blob.NewCounter(newFile(t))
	h := newHandler(t, counter, memory.Options{})
	for _, p := range []string{"/memories/a/x.md", "/memories/a/y.md", "/memories/b/x.md", "/memories/f.md", "/memories/d/e/z.md"} {
		if res := h.Create(t.Context(), p, "text of "+p); res.Err != nil {
			t.Fatalf("create %s: %v", p, res.Err)
		}
	}
	for _, c := range []struct {
		name, from, to, want string
		calls                blob.Counts
	}{
		{"a file into a new directory", "/memories/a/y.md", "/memories/n/y.md",
			"Successfully renamed /memories/a/y.md to /memories/n/y.md", blob.Counts{Rename: 1}},
		{"a file into an existing directory", "/memories/n/y.md", "/memories/b/y.md",
			"Successfully renamed /memories/n/y.md to /memories/b/y.md", blob.Counts{Rename: 1}},
		{"a directory into another", "/memories/b", "/memories/d/b",
			"Successfully renamed /memories/b to /memories/d/b", blob.Counts{Rename: 1}},
		// Refusals: the Rename, then SPEC's probes.
		{"a missing file", "/memories/a/gone.md", "/memories/n/gone.md",
			"Error: The path /memories/a/gone.md does not exist", blob.Counts{Rename: 1, Stat: 1, List: 1}},
		{"a missing file onto a file", "/memories/a/gone.md", "/memories/d/b/x.md",
			"Error: The path /memories/a/gone.md does not exist", blob.Counts{Rename: 1, Stat: 1, List: 1}},
		{"onto a file", "/memories/a/x.md", "/memories/d/b/x.md",
			"Error: The destination /memories/d/b/x.md already exists", blob.Counts{Rename: 1, Stat: 2}},
		{"onto a directory", "/memories/a/x.md", "/memories/d/e",
			"Error: The destination /memories/d/e already exists", blob.Counts{Rename: 1, Stat: 2, List: 1}},
		{"under a file", "/memories/a/x.md", "/memories/f.md/x.md",
			"Error: The path /memories/f.md is a file, not a directory", blob.Counts{Rename: 1, Stat: 3, List: 1}},
		{"under a file, deeper", "/memories/a/x.md", "/memories/f.md/g/x.md",
			"Error: The path /memories/f.md is a file, not a directory", blob.Counts{Rename: 1, Stat: 3, List: 1}},
	} {
		before := memoryFiles(t, counter, "")
		counter.Reset()
		res := h.Rename(t.Context(), c.from, c.to)
		if res.Text != c.want {
			t.Errorf("%s: got %q, want %q", c.name, res.Text, c.want)
		}
		if got := counter.Counts(); got != c.calls {
			t.Errorf("%s: calls %+v, want %+v", c.name, got, c.calls)
		}
		if res.Err != nil {
			if after := memoryFiles(t, counter, ""); !maps.Equal(after, before) {
				t.Errorf("%s: refused, but the files changed from %v to %v", c.name, before, after)
			}
		}
	}
	want := map[string]string{
		"a/x.md": "text of /memories/a/x.md", "d/b/y.md": "text of /memories/a/y.md",
		"d/b/x.md": "text of /memories/b/x.md", "f.md": "text of /memories/f.md", "d/e/z.md": "text of /memories/d/e/z.md",
	}
	if got := memoryFiles(t, counter, ""); !maps.Equal(got, want) {
		t.Errorf("the store holds %v, want %v", got, want)
	}
}

// On the file store, which refuses a file and a directory of one name
// itself (blob.Traits.ExclusiveNames), a create makes no look after its
// write: its Put and the count's, at once, and nothing else; a name that
// is a directory, or under a file, is still refused in SPEC's words.
func TestFileStoreCreateCalls(t *testing.T) {
	counter := blob.NewCounter(newFile(t))
	h := newHandler(t, counter, memory.Options{})
	for _, c := range []struct{ path, want string }{
		{"/memories/first.md", "File created successfully at: /memories/first.md"},
		{"/memories/d/x.md", "File created successfully at: /memories/d/x.md"},
		{"/memories/d", "Error: File /memories/d already exists"},
		{"/memories/first.md/y.md", "Error: The path /memories/first.md is a file, not a directory"},
	} {
		if got := h.Create(t.Context(), c.path, "x").Text; got != c.want {
			t.Errorf("create %s: got %q, want %q", c.path, got, c.want)
		}
	}
	counter.Reset()
	if got, want := h.Create(t.Context(), "/memories/d/y.md", "y").Text, "File created successfully at: /memories/d/y.md"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got, want := counter.Counts(), (blob.Counts{Put: 2}); got != want {
		t.Errorf("calls %+v, want %+v", got, want)
	}
}
