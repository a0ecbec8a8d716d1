package memory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// countState is the part of the file count object the tests read.
type countState struct {
	Files   int  `json:"files"`
	Counted bool `json:"counted"`
	Pending []struct {
		Key string `json:"key"`
	} `json:"pending"`
}

// readCount reads the file count object at key; ok is false when there is
// none.
func readCount(t testing.TB, s blob.Store, key string) (st countState, ok bool) {
	t.Helper()
	data, _, err := s.Get(context.Background(), key, blob.MaxObjectBytes)
	if errors.Is(err, blob.ErrNotExist) {
		return st, false
	}
	if err != nil {
		t.Fatalf("Get %q: %v", key, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("the file count %q holds %q: %v", key, data, err)
	}
	return st, true
}

// memoryFiles returns the memory files of s under prefix (reserved keys
// aside), with their contents.
func memoryFiles(t testing.TB, s blob.Store, prefix string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range contents(t, s) {
		if strings.HasPrefix(k, prefix) && !blob.IsReserved(k) {
			out[k] = v
		}
	}
	return out
}

// createUntilFull creates the files name(0), name(1), ... through h until a
// create is refused, and fails the test if more than most succeed (the
// limit does not hold, and the loop would not end).
func createUntilFull(t *testing.T, h *memory.Handler, name func(i int) string, most int) {
	t.Helper()
	for i := 0; i <= most; i++ {
		if createX(t.Context(), h, name(i)).IsError {
			return
		}
	}
	t.Fatalf("%d creates through one handler were not refused, over max_files=%d", most+1, most)
}

func fullText(n, limit int) string {
	return fmt.Sprintf("Error: The memory directory is full: it holds %d files, the limit is %d. Delete or merge files first.", n, limit)
}

func newHandler(t testing.TB, s blob.Store, opts memory.Options) *memory.Handler {
	t.Helper()
	opts.Logger = quiet
	h, err := memory.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func createInput(path, text string) []byte {
	b, _ := json.Marshal(map[string]string{"command": "create", "path": path, "file_text": text})
	return b
}

// Racing creates at MaxFiles-1, each through its own handler, released at
// once: exactly one is acknowledged, every other is refused as full with
// the whole SPEC text, and the store holds MaxFiles files, as its count
// says. With the count missing, the racers recount at the same time.
func TestCountRacingCreates(t *testing.T) {
	const limit, racers = 8, 16
	for _, kind := range []string{"mem", "core-only", "file"} {
		for _, start := range []string{"counted", "no count", "count changed at the limit"} {
			t.Run(kind+"/"+start, func(t *testing.T) {
				var s blob.Store
				switch kind {
				case "mem":
					s = mem.New(nil)
				case "core-only":
					s = coreOnly{mem.New(nil)}
				default:
					s = newFile(t)
				}
				seed(t, s, manyFiles("d", limit-1))
				switch start {
				case "counted":
					seed(t, s, counted(limit-1))
				case "count changed at the limit": // one too high, as a crash leaves it
					seed(t, s, map[string]string{memory.FileCountKey: fmt.Sprintf(`{"files":%d,"token":"t0","counted":false}`, limit)})
				}
				results := make([]memory.Result, racers)
				var ready, done sync.WaitGroup
				release := make(chan struct{})
				for i := range racers {
					h := newHandler(t, s, memory.Options{MaxFiles: limit})
					ready.Add(1)
					done.Add(1)
					go func() {
						defer done.Done()
						ready.Done()
						<-release
						results[i] = h.Execute(context.Background(), createInput(fmt.Sprintf("/memories/new/%02d.md", i), "x"))
					}()
				}
				ready.Wait()
				close(release)
				done.Wait()

				var acked []string
				refused := 0
				for i, r := range results {
					switch r.Text {
					case fmt.Sprintf("File created successfully at: /memories/new/%02d.md", i):
						acked = append(acked, fmt.Sprintf("new/%02d.md", i))
					case fullText(limit, limit):
						refused++
					default:
						t.Errorf("racer %d: unexpected result %q", i, r.Text)
					}
				}
				files := memoryFiles(t, s, "")
				var created []string
				for k := range files {
					if strings.HasPrefix(k, "new/") {
						created = append(created, k)
					}
				}
				slices.Sort(created)
				if len(acked) != 1 || refused != racers-1 || !slices.Equal(created, acked) || len(files) != limit {
					t.Errorf("acknowledged %q, refused %d, created %q, %d files in all; want 1 acknowledged and present, %d refused, %d files",
						acked, refused, created, len(files), racers-1, limit)
				}
				st, ok := readCount(t, s, memory.FileCountKey)
				if !ok || st.Files != limit || len(st.Pending) != 0 {
					t.Errorf("count afterwards: %+v (present %v), want %d files, nothing pending", st, ok, limit)
				}
			})
		}
	}
}

// hookStore runs before once, just before the first Put of the key at.
type hookStore struct {
	blob.Store
	at     string
	mu     sync.Mutex
	before func()
}

func (s *hookStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	s.mu.Lock()
	f := s.before
	if key == s.at {
		s.before = nil
	}
	s.mu.Unlock()
	if key == s.at && f != nil {
		f()
	}
	return s.Store.Put(ctx, key, data, c)
}

// A recount that runs while a create is between its reservation and its
// write still counts that create: the create reserved the last place, so
// the second create, which finds the count changed at the limit and
// recounts before the first file landed, is refused.
func TestCountRecountKeepsCreatesInFlight(t *testing.T) {
	inner := mem.New(nil)
	seed(t, inner, with(manyFiles("d", 2), counted(2)))
	var second memory.Result
	other := newHandler(t, inner, memory.Options{MaxFiles: 3})
	s := &hookStore{Store: inner, at: "a.md", before: func() {
		second = other.Execute(context.Background(), createInput("/memories/b.md", "b"))
	}}
	first := newHandler(t, s, memory.Options{MaxFiles: 3}).Execute(t.Context(), createInput("/memories/a.md", "a"))
	if want := "File created successfully at: /memories/a.md"; first.Text != want {
		t.Errorf("first: got %q, want %q", first.Text, want)
	}
	if want := fullText(3, 3); second.Text != want {
		t.Errorf("second, while the first was in flight: got %q, want %q", second.Text, want)
	}
	if got := slices.Sorted(maps.Keys(memoryFiles(t, inner, ""))); !slices.Equal(got, []string{"a.md", "d/f0000.md", "d/f0001.md"}) {
		t.Errorf("files: %q", got)
	}
	if st, _ := readCount(t, inner, memory.FileCountKey); st.Files != 3 || len(st.Pending) != 0 {
		t.Errorf("count: %+v, want 3 files, nothing pending", st)
	}
}

// crashStore passes calls to its inner store until the at-th call (1-based,
// counting every method); that call fails (after reaching the inner store
// when landed is set), and so does every later one: the process died.
type crashStore struct {
	inner  blob.Store
	at     int
	landed bool

	mu sync.Mutex
	n  int
}

var errCrash = errors.New("crashed")

// step reports whether the call may reach the inner store, and the error
// the caller gets.
func (c *crashStore) step() (reach bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	switch {
	case c.at == 0 || c.n < c.at:
		return true, nil
	case c.n == c.at:
		return c.landed, errCrash
	}
	return false, errCrash
}

func (c *crashStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	reach, cerr := c.step()
	if !reach {
		return nil, blob.Info{}, cerr
	}
	data, info, err := c.inner.Get(ctx, key, limit)
	if cerr != nil {
		return nil, blob.Info{}, cerr
	}
	return data, info, err
}

func (c *crashStore) Stat(ctx context.Context, key string) (blob.Info, error) {
	reach, cerr := c.step()
	if !reach {
		return blob.Info{}, cerr
	}
	info, err := c.inner.Stat(ctx, key)
	return info, cmpErr(cerr, err)
}

func (c *crashStore) Put(ctx context.Context, key string, data []byte, cond blob.Cond) (blob.Info, error) {
	reach, cerr := c.step()
	if !reach {
		return blob.Info{}, cerr
	}
	info, err := c.inner.Put(ctx, key, data, cond)
	return info, cmpErr(cerr, err)
}

func (c *crashStore) Delete(ctx context.Context, key string, cond blob.Cond) error {
	reach, cerr := c.step()
	if !reach {
		return cerr
	}
	return cmpErr(cerr, c.inner.Delete(ctx, key, cond))
}

func (c *crashStore) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	reach, cerr := c.step()
	if !reach || cerr != nil {
		return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, errCrash) }
	}
	return c.inner.List(ctx, prefix)
}

// cmpErr is the crash error when there is one, else err.
func cmpErr(crash, err error) error {
	if crash != nil {
		return crash
	}
	return err
}

func (c *crashStore) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// A crash at every storage call of create and delete, before or after the
// call lands: the count is never more than one below the files the store
// holds (far from the limit a create writes its file and its count at
// once, and a delete deletes and lowers the count at once: a crash between
// the two leaves it one off), no file other than the one deleted is lost,
// and a handler started afterwards keeps the limit.
func TestCountCrashes(t *testing.T) {
	base := manyFiles("d", 4)
	scenarios := []struct {
		name    string
		files   map[string]string // besides base
		opts    memory.Options
		input   []byte
		deletes []string // keys the command may delete
	}{
		{"create", counted(4), memory.Options{}, createInput("/memories/n/new.md", "x"), nil},
		{"create, first on the store", nil, memory.Options{}, createInput("/memories/n/new.md", "x"), nil},
		{"create, recount at the limit", map[string]string{memory.FileCountKey: `{"files":5,"token":"t0","counted":false}`},
			memory.Options{MaxFiles: 5}, createInput("/memories/n/new.md", "x"), nil},
		{"delete file", counted(4), memory.Options{}, []byte(`{"command":"delete","path":"/memories/d/f0001.md"}`), []string{"d/f0001.md"}},
		{"delete directory", counted(4), memory.Options{}, []byte(`{"command":"delete","path":"/memories/d"}`), slices.Collect(maps.Keys(base))},
	}
	for _, sc := range scenarios {
		dry := &crashStore{inner: coreOnly{mem.New(nil)}}
		seed(t, dry.inner, with(base, sc.files))
		if r := newHandler(t, dry, sc.opts).Execute(t.Context(), sc.input); r.IsError {
			t.Fatalf("%s without a crash: %q", sc.name, r.Text)
		}
		for at := 1; at <= dry.calls(); at++ {
			for _, landed := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/call %d landed %v", sc.name, at, landed), func(t *testing.T) {
					inner := coreOnly{mem.New(nil)}
					seed(t, inner, with(base, sc.files))
					crashed := &crashStore{inner: inner, at: at, landed: landed}
					if r := newHandler(t, crashed, sc.opts).Execute(t.Context(), sc.input); !r.IsError {
						// The crash came after the last call that matters.
						t.Logf("reported %q", r.Text)
					}
					checkCountCovers(t, inner, 1)
					after := memoryFiles(t, inner, "")
					for k, v := range base {
						if after[k] != v && !slices.Contains(sc.deletes, k) {
							t.Errorf("%q lost or changed: %q", k, after[k])
						}
					}
					// A handler started afterwards, with room for one file
					// beside the reservation a crashed create may leave
					// pending (it counts until it expires: gate/count.go).
					leaked := 0
					if st, ok := readCount(t, inner, memory.FileCountKey); ok {
						for _, p := range st.Pending {
							if _, ok := after[p.Key]; !ok {
								leaked++
							}
						}
					}
					h := newHandler(t, inner, memory.Options{MaxFiles: len(after) + 1 + leaked})
					if r := h.Execute(t.Context(), createInput("/memories/later.md", "l")); r.IsError {
						t.Errorf("create after the crash: %q", r.Text)
					}
					checkCountCovers(t, inner, 1)
				})
			}
		}
	}
}

// checkCountCovers fails when the store's count is more than short below
// its memory files.
func checkCountCovers(t *testing.T, s blob.Store, short int) {
	t.Helper()
	n := len(memoryFiles(t, s, ""))
	if st, ok := readCount(t, s, memory.FileCountKey); ok && st.Files >= 0 && st.Files < n-short {
		t.Errorf("the count says %d files, the store holds %d", st.Files, n)
	}
}

// The count mends itself where it may be wrong: one too high and changed
// since its recount is recounted before a create is refused; one that a
// recount left (Counted) is trusted; a missing or unreadable one is
// recounted on the first create.
func TestCountRepair(t *testing.T) {
	for _, c := range []struct {
		name      string
		count     string // "" for none
		want      string
		wantFiles int // the count afterwards
	}{
		{"too high, changed", `{"files":9,"token":"t0","counted":false}`, "File created successfully at: /memories/new.md", 5},
		{"too high, counted", `{"files":5,"token":"t0","counted":true}`, fullText(5, 5), 5},
		{"missing", "", "File created successfully at: /memories/new.md", 5},
		{"unreadable", `not json`, "File created successfully at: /memories/new.md", 5},
		{"negative", `{"files":-7}`, "File created successfully at: /memories/new.md", 5},
		{"a stale reservation", `{"files":5,"token":"t0","counted":true,"pending":[{"key":"gone.md","id":"0000000000000001","at":946684800000000000}]}`,
			"File created successfully at: /memories/new.md", 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := mem.New(nil)
			seed(t, s, manyFiles("d", 4))
			if c.count != "" {
				seed(t, s, map[string]string{memory.FileCountKey: c.count})
			}
			got := newHandler(t, s, memory.Options{MaxFiles: 5}).Execute(t.Context(), createInput("/memories/new.md", "n"))
			if got.Text != c.want {
				t.Errorf("got %q, want %q", got.Text, c.want)
			}
			if st, _ := readCount(t, s, memory.FileCountKey); st.Files != c.wantFiles || len(st.Pending) != 0 {
				t.Errorf("count afterwards %+v, want %d files, nothing pending", st, c.wantFiles)
			}
		})
	}
}

// A count object that is not one a handler writes, planted by another
// writer of the bucket, is unknown, not 0 files (nor any other number it
// seems to say): at the limit, the next create recounts and is refused as
// full, and the store keeps its files.
func TestCountPlantedNonsense(t *testing.T) {
	for _, planted := range []string{
		`{}`,
		`null`,
		`{"files":-5,"token":"t0","counted":true}`,
		`{"files":-1,"token":"t0","counted":false}`,
		`{"token":"t0","counted":true}`,
		`{"files":null,"token":"t0","counted":true}`,
		`{"files":0,"counted":true}`,
		`{"files":0,"token":"","counted":true}`,
		`{"files":0,"token":"t0"}`,
		`{"files":"0","token":"t0","counted":true}`,
	} {
		t.Run(planted, func(t *testing.T) {
			s := mem.New(nil)
			seed(t, s, manyFiles("d", 3))
			seed(t, s, map[string]string{memory.FileCountKey: planted})
			before := memoryFiles(t, s, "")
			got := newHandler(t, s, memory.Options{MaxFiles: 3}).Execute(t.Context(), createInput("/memories/new.md", "n"))
			if want := fullText(3, 3); got.Text != want {
				t.Errorf("got %q, want %q", got.Text, want)
			}
			if after := memoryFiles(t, s, ""); !maps.Equal(after, before) {
				t.Errorf("the store holds %v, want %v", after, before)
			}
			if st, _ := readCount(t, s, memory.FileCountKey); st.Files != 3 || !st.Counted || len(st.Pending) != 0 {
				t.Errorf("count afterwards %+v, want 3 files, counted, nothing pending", st)
			}
		})
	}
}

// A handler's creates and deletes keep the count exact: a delete leaves
// its file to the next create's write of the count; a refusal at the limit
// after a recount lists nothing more.
func TestCountFollowsCommands(t *testing.T) {
	s := mem.New(nil)
	steps := []struct {
		input []byte
		want  string
		files int
	}{
		{createInput("/memories/a.md", "a"), "File created successfully at: /memories/a.md", 1},
		{createInput("/memories/d/b.md", "b"), "File created successfully at: /memories/d/b.md", 2},
		{createInput("/memories/d/c.md", "c"), "File created successfully at: /memories/d/c.md", 3},
		{createInput("/memories/e.md", "e"), fullText(3, 3), 3}, // recounts once: changed since
		{createInput("/memories/e.md", "e"), fullText(3, 3), 3}, // counted: no listing
		// The delete marks the count changed; the create takes a.md off.
		{[]byte(`{"command":"delete","path":"/memories/a.md"}`), "Successfully deleted /memories/a.md", 3},
		{createInput("/memories/e.md", "e"), "File created successfully at: /memories/e.md", 3},
		{[]byte(`{"command":"delete","path":"/memories/d"}`), "Successfully deleted /memories/d", 3}, // too high by the two files
		{createInput("/memories/f.md", "f"), "File created successfully at: /memories/f.md", 2},
		{[]byte(`{"command":"rename","old_path":"/memories/f.md","new_path":"/memories/g/f.md"}`), "Successfully renamed /memories/f.md to /memories/g/f.md", 2},
	}
	lists := []int{1, 0, 0, 1, 0, 0, 0, 2, 1, 0} // Lists of the whole store (prefix ""), per step
	rec := &listRecorder{Store: s}
	h := newHandler(t, recordingMem{rec}, memory.Options{MaxFiles: 3})
	for i, st := range steps {
		rec.reset()
		got := h.Execute(t.Context(), st.input)
		if got.Text != st.want {
			t.Errorf("step %d %s: got %q, want %q", i, st.input, got.Text, st.want)
		}
		whole := 0
		for _, p := range rec.prefixes() {
			if p == "" || p == "d/" {
				whole++
			}
		}
		if whole != lists[i] {
			t.Errorf("step %d %s: %d Lists of the store or the directory deleted (%q), want %d", i, st.input, whole, rec.prefixes(), lists[i])
		}
		if c, _ := readCount(t, s, memory.FileCountKey); c.Files != st.files {
			t.Errorf("step %d %s: count %+v, want %d files", i, st.input, c, st.files)
		}
	}
}

// On a mount table each writable mount keeps its own count, under the
// mount; a rename across mounts counts its files in the destination's
// count, and is refused as full when they do not fit.
func TestCountMounts(t *testing.T) {
	team, me := mem.New(nil), mem.New(nil)
	table, err := mount.New([]mount.Mount{{Name: "team", Store: team}, {Name: "me", Store: me}})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, table, memory.Options{MaxFiles: 2})
	for _, step := range []struct{ input, want string }{
		{string(createInput("/memories/me/a.md", "a")), "File created successfully at: /memories/me/a.md"},
		{string(createInput("/memories/me/b.md", "b")), "File created successfully at: /memories/me/b.md"},
		{string(createInput("/memories/me/c.md", "c")), fullText(2, 2)},
		{string(createInput("/memories/team/c.md", "c")), "File created successfully at: /memories/team/c.md"},
		{`{"command":"rename","old_path":"/memories/me/a.md","new_path":"/memories/team/a.md"}`, "Successfully renamed /memories/me/a.md to /memories/team/a.md"},
		{string(createInput("/memories/team/d.md", "d")), fullText(2, 2)},
		{string(createInput("/memories/me/d.md", "d")), "File created successfully at: /memories/me/d.md"},
		{`{"command":"rename","old_path":"/memories/me/d.md","new_path":"/memories/team/d.md"}`, fullText(2, 2)},
	} {
		if got := h.Execute(t.Context(), []byte(step.input)); got.Text != step.want {
			t.Errorf("%s: got %q, want %q", step.input, got.Text, step.want)
		}
	}
	for name, s := range map[string]blob.Store{"team": team, "me": me} {
		if st, _ := readCount(t, s, memory.FileCountKey); st.Files != 2 {
			t.Errorf("%s: count %+v, want 2", name, st)
		}
	}
}

// A rename into another mount of a file over that mount's size limit is
// refused with create's text for the file's new path, and nothing moves.
func TestRenameAcrossMountsSizeLimit(t *testing.T) {
	table, err := mount.New([]mount.Mount{
		{Name: "a", Store: mem.New(nil)},
		{Name: "b", Store: blob.WithLimits(mem.New(nil), blob.Limits{MaxFileBytes: 4})},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, table, memory.Options{})
	for _, step := range []struct{ input, want string }{
		{string(createInput("/memories/a/d/x.md", "12345")), "File created successfully at: /memories/a/d/x.md"},
		{`{"command":"rename","old_path":"/memories/a/d/x.md","new_path":"/memories/b/x.md"}`,
			"Error: File /memories/b/x.md would be 5 bytes, over the limit of 4 bytes per memory file"},
		{`{"command":"rename","old_path":"/memories/a/d","new_path":"/memories/b/d"}`,
			"Error: File /memories/b/d/x.md would be 5 bytes, over the limit of 4 bytes per memory file"},
		{`{"command":"view","path":"/memories/a/d/x.md"}`, "Here's the content of /memories/a/d/x.md with line numbers:\n     1\t12345"},
	} {
		if got := h.Execute(t.Context(), []byte(step.input)); got.Text != step.want {
			t.Errorf("%s: got %q, want %q", step.input, got.Text, step.want)
		}
	}
}

// busyCount refuses every write of the file count after the first with
// ErrPrecondition, as if other writers always changed it first.
type busyCount struct {
	blob.Store
	mu     sync.Mutex
	writes int
}

func (s *busyCount) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if key == memory.FileCountKey {
		s.mu.Lock()
		s.writes++
		n := s.writes
		s.mu.Unlock()
		if n > 1 {
			return blob.Info{}, fmt.Errorf("busy: %w", blob.ErrPrecondition)
		}
	}
	return s.Store.Put(ctx, key, data, c)
}

// A create whose file landed but whose reservation cannot be taken off
// the pending list (the count kept changing) still succeeds: the count
// already includes the file, and the stale entry is harmless.
func TestCountConfirmContended(t *testing.T) {
	inner := mem.New(nil)
	s := &busyCount{Store: inner}
	got := newHandler(t, s, memory.Options{MaxFiles: 10}).Execute(t.Context(), createInput("/memories/a.md", "a"))
	if got.Text != "File created successfully at: /memories/a.md" || got.IsError || got.Err != nil {
		t.Fatalf("create: got %+v", got)
	}
	if s.writes < 2 {
		t.Fatalf("test bug: %d writes of the count, so the confirmation was never refused", s.writes)
	}
	if files := memoryFiles(t, inner, ""); !maps.Equal(files, map[string]string{"a.md": "a"}) {
		t.Errorf("files: %q, want a.md alone", files)
	}
	st, ok := readCount(t, inner, memory.FileCountKey)
	if !ok || st.Files != 1 || len(st.Pending) != 1 || st.Pending[0].Key != "a.md" {
		t.Errorf("count: %+v (present %v), want 1 file with a.md still pending", st, ok)
	}
}

// One handler shared by racing creates and deletes, all let go at once:
// every create and delete lands, and the count ends exact (each delete's
// file taken off by some create's write of the count, none twice).
func TestCountCreditsUnderRaces(t *testing.T) {
	s := mem.New(nil)
	seed(t, s, with(manyFiles("old", 40), kept(40)))
	h := newHandler(t, s, memory.Options{})
	const n = 40
	start := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]memory.Result, 2*n)
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = h.Execute(t.Context(), createInput(fmt.Sprintf("/memories/new/%d.md", i), "x"))
		})
		wg.Go(func() {
			<-start
			results[n+i] = h.Delete(t.Context(), fmt.Sprintf("/memories/old/f%04d.md", i))
		})
	}
	close(start)
	wg.Wait()
	for i, r := range results {
		if r.IsError {
			t.Errorf("command %d: %q", i, r.Text)
		}
	}
	// One more create takes off what the racing creates left.
	if r := h.Create(t.Context(), "/memories/last.md", "x"); r.IsError {
		t.Fatal(r.Text)
	}
	files := len(memoryFiles(t, s, ""))
	if st, ok := readCount(t, s, memory.FileCountKey); !ok || st.Files != files {
		t.Errorf("the count says %d files, the store holds %d", st.Files, files)
	}
}

// syncRecorder notes, for every Put, its key and whether its context let
// the store skip its syncs (blob.WithLazySync).
type syncRecorder struct {
	blob.Store
	mu   sync.Mutex
	puts []string
}

func (s *syncRecorder) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	s.mu.Lock()
	if blob.LazySync(ctx) {
		key += " (lazy)"
	}
	s.puts = append(s.puts, key)
	s.mu.Unlock()
	return s.Store.Put(ctx, strings.TrimSuffix(key, " (lazy)"), data, c)
}

func (s *syncRecorder) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.puts
	s.puts = nil
	slices.Sort(out) // a fast create sends its two Puts at once
	return out
}

// Only the count's writes far from the limit skip the store's syncs: a
// memory file is always written durably, and so is every write of the
// count near the limit (the first count, reservations, confirmations), so
// that a crash of the machine can leave the count too low only by creates
// made far from the limit.
func TestCountWritesLazilyOnlyFarFromTheLimit(t *testing.T) {
	s := &syncRecorder{Store: mem.New(nil)}
	const maxFiles = 20 // the fast path counts while fewer than 20-16 files are counted
	h := newHandler(t, s, memory.Options{MaxFiles: maxFiles})
	const count = ".cloudmem/files"
	want := [][]string{
		{count, count, "f0.md"},      // no count yet: the recount written with the reservation, the file, its confirmation
		{count + " (lazy)", "f1.md"}, // 1 counted: the fast path
		{count + " (lazy)", "f2.md"},
		{count + " (lazy)", "f3.md"},
		{count, count, "f4.md"}, // 4 counted: within 16 of the limit, the reservation and its confirmation
	}
	for i, w := range want {
		if r := h.Execute(t.Context(), createInput(fmt.Sprintf("/memories/f%d.md", i), "x")); r.IsError {
			t.Fatalf("create %d: %s", i, r.Text)
		}
		slices.Sort(w)
		if got := s.take(); !slices.Equal(got, w) {
			t.Errorf("create %d: Puts %q, want %q", i, got, w)
		}
	}
}

// wantText fails the test unless r's text is text; who says which command.
func wantText(t *testing.T, who string, r memory.Result, text string) {
	t.Helper()
	if r.Text != text {
		t.Fatalf("%s: %q, want %q", who, r.Text, text)
	}
}

// createX creates /memories/name holding "x" through h.
func createX(ctx context.Context, h *memory.Handler, name string) memory.Result {
	return h.Execute(ctx, createInput("/memories/"+name, "x"))
}

// A file delete far from the limit, as the handler remembers the count,
// does not read the count. What that gives up, exactly: when another
// handler has since filled the store and recounted it at the limit
// (Counted), the delete does not mark the count changed, so creates are
// refused as full, with one place free, until the next delete, which reads
// the count and marks it; the create after that recounts and is
// acknowledged. The store never holds more than the limit.
func TestDeleteFarFromTheLimitTrustsTheCount(t *testing.T) {
	const maxFiles = 20
	inner := mem.New(nil)
	counter := blob.NewCounter(inner)
	a := newHandler(t, counter, memory.Options{MaxFiles: maxFiles})
	b := newHandler(t, inner, memory.Options{MaxFiles: maxFiles})
	ctx := t.Context()
	wantText(t, "a creates a.md", createX(ctx, a, "a.md"), "File created successfully at: /memories/a.md")
	for i := range maxFiles - 1 {
		name := fmt.Sprintf("b%02d.md", i)
		wantText(t, "b creates "+name, createX(ctx, b, name), "File created successfully at: /memories/"+name)
	}
	wantText(t, "b creates one too many", createX(ctx, b, "late.md"), fullText(maxFiles, maxFiles))
	if st, _ := readCount(t, inner, memory.FileCountKey); st.Files != maxFiles || !st.Counted {
		t.Fatalf("after b's refused create, the count is %+v, want %d files, recounted", st, maxFiles)
	}

	counter.Reset()
	wantText(t, "a deletes a.md", a.Execute(ctx, []byte(`{"command":"delete","path":"/memories/a.md"}`)), "Successfully deleted /memories/a.md")
	if got := counter.Counts(); got != (blob.Counts{Delete: 1}) {
		t.Fatalf("a's delete, which remembers the count far from the limit, made %+v, want one Delete", got)
	}
	wantText(t, "b creates in the freed place", createX(ctx, b, "late.md"), fullText(maxFiles, maxFiles))
	wantText(t, "a creates in the freed place", createX(ctx, a, "late.md"), fullText(maxFiles, maxFiles))

	wantText(t, "b deletes b00.md", b.Execute(ctx, []byte(`{"command":"delete","path":"/memories/b00.md"}`)), "Successfully deleted /memories/b00.md")
	wantText(t, "b creates late.md", createX(ctx, b, "late.md"), "File created successfully at: /memories/late.md")
	wantText(t, "b creates late2.md", createX(ctx, b, "late2.md"), "File created successfully at: /memories/late2.md")
	wantText(t, "b creates one too many", createX(ctx, b, "late3.md"), fullText(maxFiles, maxFiles))
	if n := len(memoryFiles(t, inner, "")); n != maxFiles {
		t.Fatalf("the store holds %d files, want %d", n, maxFiles)
	}
}

// A handler that only deletes, after another handler filled the store and
// recounted it at the limit, leaves creates refused as full with one place
// free, not more: its first delete trusts the count it remembers, its next
// one reads the count and marks it changed, and the create after that
// recounts.
func TestDeletesFarFromTheLimitTrustTheCountOnce(t *testing.T) {
	const maxFiles = 20
	inner := mem.New(nil)
	a := newHandler(t, inner, memory.Options{MaxFiles: maxFiles})
	b := newHandler(t, inner, memory.Options{MaxFiles: maxFiles})
	ctx := t.Context()
	for _, name := range []string{"a0.md", "a1.md", "a2.md"} {
		wantText(t, "a creates "+name, createX(ctx, a, name), "File created successfully at: /memories/"+name)
	}
	for i := range maxFiles - 3 {
		name := fmt.Sprintf("b%02d.md", i)
		wantText(t, "b creates "+name, createX(ctx, b, name), "File created successfully at: /memories/"+name)
	}
	wantText(t, "b creates one too many", createX(ctx, b, "late.md"), fullText(maxFiles, maxFiles))
	for _, name := range []string{"a0.md", "a1.md", "a2.md"} {
		wantText(t, "a deletes "+name, a.Execute(ctx, []byte(`{"command":"delete","path":"/memories/`+name+`"}`)), "Successfully deleted /memories/"+name)
	}
	wantText(t, "b creates in a freed place", createX(ctx, b, "late.md"), "File created successfully at: /memories/late.md")
}

// A delete that deletes no file (a missing path, a directory) does not use
// up the handler's trust in the count it remembers: the file delete after
// it still sends its Delete alone.
func TestDeleteOfNoFileKeepsTheTrust(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct{ first, firstText string }{
		{"/memories/none.md", "Error: The path /memories/none.md does not exist"},
		{"/memories/d", "Successfully deleted /memories/d"},
	} {
		counter := blob.NewCounter(mem.New(nil))
		h := newHandler(t, counter, memory.Options{MaxFiles: 20})
		for _, name := range []string{"a.md", "d/x.md"} {
			wantText(t, "create "+name, createX(ctx, h, name), "File created successfully at: /memories/"+name)
		}
		wantText(t, "delete "+tc.first, h.Execute(ctx, []byte(`{"command":"delete","path":"`+tc.first+`"}`)), tc.firstText)
		counter.Reset()
		wantText(t, "delete a.md", h.Execute(ctx, []byte(`{"command":"delete","path":"/memories/a.md"}`)), "Successfully deleted /memories/a.md")
		if got := counter.Counts(); got != (blob.Counts{Delete: 1}) {
			t.Errorf("the delete of a.md after the delete of %s made %+v, want one Delete", tc.first, got)
		}
	}
}

// repeatDeletes is a store whose Delete reads before it deletes and
// succeeds on a missing key, as S3's does: two Deletes of one key that
// both read it before either deletes both succeed. It reports
// blob.Traits.DeletesMayRepeat. A Delete of x.md waits at gate (when set)
// between its read and its delete.
type repeatDeletes struct {
	blob.Store
	gate *sync.WaitGroup
}

func (s repeatDeletes) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen, DeletesMayRepeat: true}
}

func (s repeatDeletes) Delete(ctx context.Context, key string, c blob.Cond) error {
	if _, err := s.Store.Stat(ctx, key); err != nil {
		return err
	}
	if s.gate != nil && key == "x.md" {
		s.gate.Done()
		s.gate.Wait()
	}
	if err := s.Store.Delete(ctx, key, c); err != nil && !errors.Is(err, blob.ErrNotExist) {
		return err
	}
	return nil
}

// On a store whose racing deletes of one key may all succeed
// (DeletesMayRepeat), two handlers that delete one file at once are both
// told it is deleted; neither takes it off the file count, which would
// leave the count one too low and let the store grow past MaxFiles. Both
// then create a file and fill the store: it ends with MaxFiles files, not
// one more.
func TestRacingDeletesThatMayRepeatKeepTheLimit(t *testing.T) {
	ctx := t.Context()
	const maxFiles = 30
	var gate sync.WaitGroup
	store := repeatDeletes{Store: mem.New(nil)}
	hs := []*memory.Handler{newHandler(t, store, memory.Options{MaxFiles: maxFiles}), newHandler(t, store, memory.Options{MaxFiles: maxFiles})}
	for i, h := range hs {
		wantText(t, "seed", createX(ctx, h, fmt.Sprintf("seed%d.md", i)), fmt.Sprintf("File created successfully at: /memories/seed%d.md", i))
	}
	wantText(t, "create x.md", createX(ctx, hs[0], "x.md"), "File created successfully at: /memories/x.md")
	gate.Add(len(hs))
	raced := repeatDeletes{Store: store.Store, gate: &gate}
	racers := []*memory.Handler{newHandler(t, raced, memory.Options{MaxFiles: maxFiles}), newHandler(t, raced, memory.Options{MaxFiles: maxFiles})}
	for _, h := range racers { // each learns the count, as hs did
		wantText(t, "view", h.Execute(ctx, []byte(`{"command":"delete","path":"/memories/none.md"}`)), "Error: The path /memories/none.md does not exist")
	}
	results := make([]memory.Result, len(racers))
	var wg sync.WaitGroup
	for i, h := range racers {
		wg.Go(func() { results[i] = h.Execute(ctx, []byte(`{"command":"delete","path":"/memories/x.md"}`)) })
	}
	wg.Wait()
	for i, r := range results {
		wantText(t, fmt.Sprintf("racing delete %d", i), r, "Successfully deleted /memories/x.md")
	}
	for i, h := range racers { // each takes what it deleted off the count, if it does
		wantText(t, "create", createX(ctx, h, fmt.Sprintf("h%d/first.md", i)), fmt.Sprintf("File created successfully at: /memories/h%d/first.md", i))
	}
	for i, h := range racers {
		createUntilFull(t, h, func(j int) string { return fmt.Sprintf("h%d/f%d.md", i, j) }, maxFiles)
	}
	if files := len(memoryFiles(t, store.Store, "")); files != maxFiles {
		t.Errorf("the store holds %d files after two racing deletes of one file and creates until full, want max_files=%d", files, maxFiles)
	}
}
