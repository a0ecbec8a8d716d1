// Package mounttest checks a mount table (package mount) over any backend:
// that a read-only mount refuses every write while the mount beside it stays
// writable, and that concurrent writers in two mounts, with renames across
// them, lose nothing. Integration tests call Run with a constructor for
// their server, so "mounts work on S3" means the handler's mount rules hold
// over S3 stores, not only over the in-memory one.
//
// Only test code may import this package.
package mounttest

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// Run runs every check, each on stores from newStore. newStore must return
// a new, empty store (each call its own key space) and arrange its cleanup
// with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Helper()
	t.Run("ReadOnlyMount", func(t *testing.T) { testReadOnlyMount(t, newStore) })
	t.Run("ConcurrentMounts", func(t *testing.T) { testConcurrentMounts(t, newStore) })
}

// handler returns a Handler over s whose storage failures are logged
// through t, and whose lost races are counted in conflicts when it is not
// nil.
func handler(t *testing.T, s blob.Store, conflicts ...*atomic.Int64) *memory.Handler {
	t.Helper()
	opts := memory.Options{Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}
	if len(conflicts) > 0 {
		opts.Observer = conflictCounter{conflicts[0]}
	}
	h, err := memory.New(s, opts)
	if err != nil {
		t.Fatalf("memory.New: %v", err)
	}
	return h
}

// conflictCounter is a memory.Observer that counts the races a handler
// lost (and then retried or reported).
type conflictCounter struct{ n *atomic.Int64 }

func (c conflictCounter) CommandStart(ctx context.Context, _ memory.CommandInfo) context.Context {
	return ctx
}
func (c conflictCounter) CommandConflict(context.Context, bool)     { c.n.Add(1) }
func (c conflictCounter) CommandEnd(context.Context, memory.Result) {}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func table(t *testing.T, mounts ...mount.Mount) blob.Store {
	t.Helper()
	s, err := mount.New(mounts)
	if err != nil {
		t.Fatalf("mount.New: %v", err)
	}
	return s
}

// snapshot returns every key of s with its content and version.
func snapshot(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	infos, err := blob.ListAll(t.Context(), s, "")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, info := range infos {
		data, got, err := s.Get(t.Context(), info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatalf("Get %q: %v", info.Key, err)
		}
		out[info.Key] = string(data) + "@" + got.Version
	}
	return out
}

func content(t *testing.T, s blob.Store, key string) string {
	t.Helper()
	data, _, err := s.Get(t.Context(), key, blob.MaxObjectBytes)
	if err != nil {
		t.Fatalf("Get %q: %v", key, err)
	}
	return string(data)
}

// testReadOnlyMount sends every writing command to a read-only mount, and
// a write to the writable mount beside it between them.
func testReadOnlyMount(t *testing.T, newStore func(t *testing.T) blob.Store) {
	ctx := t.Context()
	ro, rw := newStore(t), newStore(t)
	for key, data := range map[string]string{"notes.md": "team notes\n", "d/a.md": "a\n"} {
		if _, err := ro.Put(ctx, key, []byte(data), blob.Cond{}); err != nil {
			t.Fatalf("seeding: %v", err)
		}
	}
	before := snapshot(t, ro)
	h := handler(t, table(t, mount.Mount{Name: "ro", Store: ro, ReadOnly: true}, mount.Mount{Name: "rw", Store: rw}))

	refused := func(command string) string {
		return "Error: The memory directory is read-only: " + command + " is not allowed"
	}
	for _, c := range []struct{ input, want string }{
		{`{"command":"view","path":"/memories/ro/notes.md"}`, "Here's the content of /memories/ro/notes.md with line numbers:\n     1\tteam notes\n     2\t"},
		{`{"command":"create","path":"/memories/ro/new.md","file_text":"x"}`, refused("create")},
		{`{"command":"create","path":"/memories/ro/notes.md","file_text":"x"}`, refused("create")},
		{`{"command":"create","path":"/memories/rw/x.md","file_text":"mine\n"}`, "File created successfully at: /memories/rw/x.md"},
		{`{"command":"str_replace","path":"/memories/ro/notes.md","old_str":"team","new_str":"my"}`, refused("str_replace")},
		{`{"command":"insert","path":"/memories/ro/notes.md","insert_line":1,"insert_text":"x"}`, refused("insert")},
		{`{"command":"insert","path":"/memories/ro/missing.md","insert_line":0,"insert_text":"x"}`, refused("insert")},
		{`{"command":"delete","path":"/memories/ro/notes.md"}`, refused("delete")},
		{`{"command":"delete","path":"/memories/ro/d"}`, refused("delete")},
		{`{"command":"delete","path":"/memories/ro"}`, "Error: Cannot delete the mount point /memories/ro"},
		{`{"command":"rename","old_path":"/memories/ro/notes.md","new_path":"/memories/ro/n.md"}`, refused("rename")},
		{`{"command":"rename","old_path":"/memories/ro/d","new_path":"/memories/rw/d"}`,
			"Error: Cannot move /memories/ro/d to /memories/rw/d: the mount point /memories/ro is read-only"},
		{`{"command":"rename","old_path":"/memories/rw/x.md","new_path":"/memories/ro/x.md"}`,
			"Error: Cannot move /memories/rw/x.md to /memories/ro/x.md: the mount point /memories/ro is read-only"},
		{`{"command":"str_replace","path":"/memories/rw/x.md","old_str":"mine","new_str":"still mine"}`,
			"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tstill mine\n     2\t"},
	} {
		if got := h.Execute(ctx, []byte(c.input)); got.Text != c.want {
			t.Errorf("input %s\n got %q\nwant %q", c.input, got.Text, c.want)
		}
	}
	if after := snapshot(t, ro); !maps.Equal(after, before) {
		t.Errorf("the read-only mount changed:\n got %q\nwant %q", after, before)
	}
	keys, err := blob.ListAll(ctx, rw, "")
	if err != nil {
		t.Fatal(err)
	}
	keys = slices.DeleteFunc(keys, func(info blob.Info) bool { // the handler's own: the file count, MinIO's witnesses
		return memory.IsBookkeeping(info.Key)
	})
	if len(keys) != 1 || keys[0].Key != "x.md" || content(t, rw, "x.md") != "still mine\n" {
		t.Errorf("the writable mount holds %v, want x.md only", keys)
	}
}

// Sizes of the concurrency check, small enough for a remote server.
const (
	writers = 4 // inserting goroutines per mount
	lines   = 5 // lines each inserts
	movers  = 4 // goroutines that each move one file from mount a to b
	resends = 100
)

// testConcurrentMounts starts inserters in two mounts and movers between
// them, releases them all at once, and counts: every acknowledged insert is
// a line of its mount's file (and no other line is), every moved file is in
// mount b and not in mount a.
func testConcurrentMounts(t *testing.T, newStore func(t *testing.T) blob.Store) {
	ctx := t.Context()
	stores := map[string]blob.Store{"a": newStore(t), "b": newStore(t)}
	tab := table(t, mount.Mount{Name: "a", Store: stores["a"]}, mount.Mount{Name: "b", Store: stores["b"]})
	setup := handler(t, tab)
	for _, input := range []string{
		`{"command":"create","path":"/memories/a/log.md","file_text":""}`,
		`{"command":"create","path":"/memories/b/log.md","file_text":""}`,
	} {
		if got := setup.Execute(ctx, []byte(input)); got.IsError {
			t.Fatalf("setup %s: %s", input, got.Text)
		}
	}

	var (
		mu       sync.Mutex
		acked    = map[string][]string{} // mount -> acknowledged lines
		moved    []string
		refusals int          // conflicts answered, then sent again
		lost     atomic.Int64 // races the handlers lost, retried or answered
		failures []string
		start    = make(chan struct{})
		wg       sync.WaitGroup
	)
	// send runs input until it is not refused for a conflict and returns
	// the final text.
	send := func(h *memory.Handler, input string) string {
		for range resends {
			res := h.Execute(ctx, []byte(input))
			if !strings.Contains(res.Text, "was changed by another writer at the same time") {
				return res.Text
			}
			mu.Lock()
			refusals++
			mu.Unlock()
		}
		return "gave up after conflicts"
	}
	for _, m := range []string{"a", "b"} {
		for w := range writers {
			h := handler(t, tab, &lost)
			wg.Go(func() {
				<-start
				for n := range lines {
					line := fmt.Sprintf("%s-%d-%d", m, w, n)
					input := fmt.Sprintf(`{"command":"insert","path":"/memories/%s/log.md","insert_line":0,"insert_text":%q}`, m, line)
					text := send(h, input)
					mu.Lock()
					if text == "The file /memories/"+m+"/log.md has been edited." {
						acked[m] = append(acked[m], line)
					} else {
						failures = append(failures, input+": "+text)
					}
					mu.Unlock()
				}
			})
		}
	}
	for i := range movers {
		h := handler(t, tab, &lost)
		wg.Go(func() {
			<-start
			from, to := fmt.Sprintf("/memories/a/mv/%d.md", i), fmt.Sprintf("/memories/b/mv/%d.md", i)
			texts := []string{
				send(h, fmt.Sprintf(`{"command":"create","path":%q,"file_text":"moved %d\n"}`, from, i)),
				send(h, fmt.Sprintf(`{"command":"rename","old_path":%q,"new_path":%q}`, from, to)),
			}
			mu.Lock()
			defer mu.Unlock()
			if texts[0] == "File created successfully at: "+from && texts[1] == "Successfully renamed "+from+" to "+to {
				moved = append(moved, fmt.Sprintf("mv/%d.md", i))
			} else {
				failures = append(failures, fmt.Sprintf("move %d: %q", i, texts))
			}
		})
	}
	close(start)
	wg.Wait()

	t.Logf("%d inserts and %d moves acknowledged; the handlers lost %d races, %d answered as conflicts and sent again",
		len(acked["a"])+len(acked["b"]), len(moved), lost.Load(), refusals)
	for _, f := range failures {
		t.Errorf("not acknowledged: %s", f)
	}
	for _, m := range []string{"a", "b"} {
		got := strings.Split(strings.TrimSuffix(content(t, stores[m], "log.md"), "\n"), "\n")
		slices.Sort(got)
		want := slices.Sorted(slices.Values(acked[m]))
		if len(want) != writers*lines || !slices.Equal(got, want) {
			t.Errorf("mount %s: log.md holds %d lines %q, want the %d acknowledged %q", m, len(got), got, writers*lines, want)
		}
	}
	for _, key := range moved {
		if _, err := stores["a"].Stat(ctx, key); err == nil {
			t.Errorf("%s was moved but is still in mount a", key)
		}
		if got, want := content(t, stores["b"], key), "moved "+strings.TrimSuffix(strings.TrimPrefix(key, "mv/"), ".md")+"\n"; got != want {
			t.Errorf("mount b's %s holds %q, want %q", key, got, want)
		}
	}
	if len(moved) != movers {
		t.Errorf("%d of %d moves acknowledged", len(moved), movers)
	}
}
