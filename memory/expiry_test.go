package memory_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/policy"
	"github.com/cloudmem/cloudmem/storeurl"
)

// fakeClock is a clock the test sets. It is safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// expiryRig is a store whose files under /memories/scratch expire an hour
// after their last change, by a fake clock, with history on.
type expiryRig struct {
	clock *fakeClock
	t0    time.Time      // when the rig's old files last changed
	raw   blob.Store     // beneath expiry and history
	hist  *history.Store // beneath expiry
	store blob.Store     // the expiring store
	h     *memory.Handler
	age   func(t *testing.T, key string) // makes key's last change t0
}

var scratchRule = &policy.Policy{Expire: []policy.ExpireRule{{Path: "/memories/scratch/**", After: time.Hour}}}

// expiryStores are the rigs' backends: mem, whose Modified is the fake
// clock's (files written before the clock moves are old), and file, whose
// Modified is the real mtime (a file is made old by setting its mtime).
var expiryStores = []struct {
	name string
	new  func(t *testing.T, clock *fakeClock) (blob.Store, func(t *testing.T, key string, at time.Time))
}{
	{"mem", func(t *testing.T, clock *fakeClock) (blob.Store, func(*testing.T, string, time.Time)) {
		return mem.New(&mem.Options{Now: clock.Now}), func(*testing.T, string, time.Time) {}
	}},
	{"file", func(t *testing.T, _ *fakeClock) (blob.Store, func(*testing.T, string, time.Time)) {
		dir := t.TempDir()
		s, err := file.Open(t.Context(), dir, &file.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s, func(t *testing.T, key string, at time.Time) {
			if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(key)), at, at); err != nil {
				t.Fatal(err)
			}
		}
	}},
}

func newExpiryRig(t *testing.T, newStore func(*testing.T, *fakeClock) (blob.Store, func(*testing.T, string, time.Time)), opts memory.Options) *expiryRig {
	t.Helper()
	// A whole second a day ago: the file store's mtime has whole seconds,
	// and the files the test writes on it are then a day younger.
	t0 := time.Now().Add(-24 * time.Hour).Truncate(time.Second)
	clock := &fakeClock{t: t0}
	raw, setTime := newStore(t, clock)
	hist, err := history.New(raw, &history.Options{Actor: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	s := storeurl.Expiring(hist, scratchRule, clock.Now)
	opts.Logger = quiet
	h, err := memory.New(s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return &expiryRig{clock: clock, t0: t0, raw: raw, hist: hist, store: s, h: h,
		age: func(t *testing.T, key string) { setTime(t, key, t0) }}
}

// create writes path through the handler and makes it old (changed at t0).
func (r *expiryRig) create(t *testing.T, path, text string) {
	t.Helper()
	if res := r.h.Create(t.Context(), path, text); res.IsError {
		t.Fatal(res.Text)
	}
	key, err := memory.Resolve(path)
	if err != nil {
		t.Fatal(err)
	}
	r.age(t, key)
}

// Each command sees an expired file as absent from the instant it expires,
// and not a nanosecond before; writes that meet it delete it, recorded as
// policy:expire.
func TestExpiryEveryCommand(t *testing.T) {
	const old = "/memories/scratch/a.md"
	type step struct {
		name string
		run  func(ctx context.Context, h *memory.Handler) memory.Result
		live string // the whole text while the file lives
		gone string // the whole text once it expired
		// raw: what the scratch file's key holds in the store beneath
		// once the command ran on the expired file ("" for nothing, "*"
		// for either: a create beneath it deletes it only on a store that
		// keeps names exclusive, the file store; elsewhere a sweep does).
		raw string
	}
	listing := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n"
	steps := []step{
		{name: "view file", run: func(ctx context.Context, h *memory.Handler) memory.Result { return h.View(ctx, old, nil) },
			live: "Here's the content of " + old + " with line numbers:\n     1\told\n     2\t",
			gone: "Error: The path " + old + " does not exist. Please provide a valid path.", raw: "old\n"},
		{name: "view root", run: func(ctx context.Context, h *memory.Handler) memory.Result { return h.View(ctx, "/memories", nil) },
			live: listing + "14B\t/memories\n5B\t/memories/keep.md\n9B\t/memories/scratch/\n4B\t/memories/scratch/a.md\n5B\t/memories/scratch/b.md",
			gone: listing + "10B\t/memories\n5B\t/memories/keep.md\n5B\t/memories/scratch/\n5B\t/memories/scratch/b.md", raw: "old\n"},
		{name: "view dir", run: func(ctx context.Context, h *memory.Handler) memory.Result {
			return h.View(ctx, "/memories/scratch", nil)
		},
			live: "Here're the files and directories up to 2 levels deep in /memories/scratch, excluding hidden items and node_modules:\n9B\t/memories/scratch\n4B\t/memories/scratch/a.md\n5B\t/memories/scratch/b.md",
			gone: "Here're the files and directories up to 2 levels deep in /memories/scratch, excluding hidden items and node_modules:\n5B\t/memories/scratch\n5B\t/memories/scratch/b.md", raw: "old\n"},
		{name: "str_replace", run: func(ctx context.Context, h *memory.Handler) memory.Result {
			return h.StrReplace(ctx, old, "old", "new")
		},
			live: "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tnew\n     2\t",
			gone: "Error: The path " + old + " does not exist. Please provide a valid path.", raw: "old\n"},
		{name: "insert", run: func(ctx context.Context, h *memory.Handler) memory.Result { return h.Insert(ctx, old, 0, "top") },
			live: "The file " + old + " has been edited.",
			gone: "Error: The path " + old + " does not exist", raw: "old\n"},
		{name: "delete", run: func(ctx context.Context, h *memory.Handler) memory.Result { return h.Delete(ctx, old) },
			live: "Successfully deleted " + old,
			gone: "Error: The path " + old + " does not exist"},
		{name: "rename from", run: func(ctx context.Context, h *memory.Handler) memory.Result {
			return h.Rename(ctx, old, "/memories/moved.md")
		},
			live: "Successfully renamed " + old + " to /memories/moved.md",
			gone: "Error: The path " + old + " does not exist"},
		{name: "rename onto", run: func(ctx context.Context, h *memory.Handler) memory.Result {
			return h.Rename(ctx, "/memories/keep.md", old)
		},
			live: "Error: The destination " + old + " already exists",
			gone: "Successfully renamed /memories/keep.md to " + old, raw: "keep\n"},
		{name: "create over", run: func(ctx context.Context, h *memory.Handler) memory.Result {
			return h.Create(ctx, old, "fresh\n")
		},
			live: "Error: File " + old + " already exists",
			gone: "File created successfully at: " + old, raw: "fresh\n"},
		{name: "create beneath", run: func(ctx context.Context, h *memory.Handler) memory.Result {
			return h.Create(ctx, old+"/x.md", "x")
		},
			live: "Error: The path " + old + " is a file, not a directory",
			gone: "File created successfully at: " + old + "/x.md", raw: "*"},
	}
	for _, st := range expiryStores {
		for _, s := range steps {
			t.Run(st.name+"/"+s.name, func(t *testing.T) {
				for _, gone := range []bool{false, true} {
					ctx := t.Context()
					r := newExpiryRig(t, st.new, memory.Options{})
					r.create(t, old, "old\n")
					r.create(t, "/memories/keep.md", "keep\n")
					r.clock.Set(r.t0.Add(30 * time.Minute)) // b.md is younger
					if res := r.h.Create(ctx, "/memories/scratch/b.md", "young"); res.IsError {
						t.Fatal(res.Text)
					}
					at, want := r.t0.Add(time.Hour-time.Nanosecond), s.live
					if gone {
						at, want = r.t0.Add(time.Hour), s.gone
					}
					r.clock.Set(at)
					if res := s.run(ctx, r.h); res.Text != want {
						t.Errorf("at %v:\n got %q\nwant %q", at.Sub(r.t0), res.Text, want)
					}
					if !gone || s.raw == "*" {
						continue
					}
					data, _, err := r.raw.Get(ctx, "scratch/a.md", 1<<20)
					if got := string(data); got != s.raw || (s.raw == "") != errors.Is(err, blob.ErrNotExist) {
						t.Errorf("the store beneath holds %q (%v), want %q", got, err, s.raw)
					}
					if s.raw == "" || s.raw == "keep\n" || s.raw == "fresh\n" {
						checkExpiredRecord(t, r.hist, "scratch/a.md")
					}
				}
			})
		}
	}
}

// checkExpiredRecord checks that history recorded the deletion of key by
// the write policy: a "deleted" version whose actor is policy:expire.
func checkExpiredRecord(t *testing.T, hist *history.Store, key string) {
	t.Helper()
	vs, err := hist.History(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Op == history.OpDeleted {
			if v.Actor != blob.ExpireActor {
				t.Errorf("the deletion of %s was recorded as %q's, want %q", key, v.Actor, blob.ExpireActor)
			}
			return
		}
	}
	t.Errorf("no deletion of %s recorded: %+v", key, vs)
}

// An expired file frees its place under the file limit at the instant it
// expires, though nothing wrote the store.
func TestExpiryFreesFileCount(t *testing.T) {
	for _, st := range expiryStores {
		t.Run(st.name, func(t *testing.T) {
			ctx := t.Context()
			r := newExpiryRig(t, st.new, memory.Options{MaxFiles: 2})
			r.create(t, "/memories/scratch/a.md", "old")
			r.clock.Set(r.t0.Add(time.Minute))
			if res := r.h.Create(ctx, "/memories/b.md", "b"); res.IsError {
				t.Fatal(res.Text)
			}
			full := "Error: The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first."
			r.clock.Set(r.t0.Add(time.Hour - time.Nanosecond))
			for range 2 { // the second refusal finds the count marked as counted
				if res := r.h.Create(ctx, "/memories/c.md", "c"); res.Text != full {
					t.Fatalf("before the expiry: %q, want %q", res.Text, full)
				}
			}
			r.clock.Set(r.t0.Add(time.Hour))
			if res := r.h.Create(ctx, "/memories/c.md", "c"); res.Text != "File created successfully at: /memories/c.md" {
				t.Fatalf("once scratch/a.md expired: %q", res.Text)
			}
			full = "Error: The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first."
			if res := r.h.Create(ctx, "/memories/d.md", "d"); res.Text != full {
				t.Fatalf("then: %q, want %q", res.Text, full)
			}
			files, err := r.h.Files(ctx, "/memories")
			if err != nil {
				t.Fatal(err)
			}
			var paths []string
			for _, f := range files {
				paths = append(paths, f.Path)
			}
			if want := []string{"/memories/b.md", "/memories/c.md"}; !slices.Equal(paths, want) {
				t.Errorf("Files = %q, want %q", paths, want)
			}
		})
	}
}

// The sweep deletes every expired file, at the version it saw, recorded as
// policy:expire; its dry run deletes nothing.
func TestExpireSweep(t *testing.T) {
	for _, st := range expiryStores {
		t.Run(st.name, func(t *testing.T) {
			ctx := t.Context()
			r := newExpiryRig(t, st.new, memory.Options{})
			r.create(t, "/memories/scratch/a.md", "a")
			r.create(t, "/memories/scratch/d/b.md", "b")
			r.create(t, "/memories/keep.md", "k") // old, but no rule matches it
			r.clock.Set(r.t0.Add(30 * time.Minute))
			if res := r.h.Create(ctx, "/memories/scratch/young.md", "y"); res.IsError {
				t.Fatal(res.Text)
			}
			sweep := func(dry bool) []string {
				var keys []string
				for info, err := range blob.Expire(ctx, r.store, dry) {
					if err != nil {
						t.Fatal(err)
					}
					keys = append(keys, info.Key)
				}
				return keys
			}
			if got := sweep(false); got != nil {
				t.Errorf("before the expiry the sweep deleted %q", got)
			}
			r.clock.Set(r.t0.Add(time.Hour))
			expired := []string{"scratch/a.md", "scratch/d/b.md"}
			want := expired
			for range 2 {
				if got := sweep(true); !slices.Equal(got, want) {
					t.Errorf("dry run: %q, want %q", got, want)
				}
			}
			if got := sweep(false); !slices.Equal(got, want) {
				t.Errorf("sweep: %q, want %q", got, want)
			}
			if got := sweep(false); got != nil {
				t.Errorf("a second sweep: %q", got)
			}
			raw, err := blob.ListAll(ctx, r.raw, "")
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, info := range raw {
				if !blob.IsReserved(info.Key) {
					keys = append(keys, info.Key)
				}
			}
			if want := []string{"keep.md", "scratch/young.md"}; !slices.Equal(keys, want) {
				t.Errorf("the store beneath holds %q, want %q", keys, want)
			}
			for _, k := range expired {
				checkExpiredRecord(t, r.hist, k)
			}
		})
	}
}

// Sweeps and writers released at once: 4 sweeps over 24 expired files
// while 12 writers each create one of them anew. Every create is
// acknowledged and its file stays, whatever a sweep saw (a concurrent
// change wins); every other expired file is deleted by exactly one sweep;
// each expired version's deletion is recorded once, as policy:expire.
func TestExpireSweepsAndWritersAtOnce(t *testing.T) {
	const files, writers, sweeps = 24, 12, 4
	for _, st := range expiryStores {
		t.Run(st.name, func(t *testing.T) {
			ctx := t.Context()
			r := newExpiryRig(t, st.new, memory.Options{})
			path := func(i int) string { return "/memories/scratch/f" + strconv.Itoa(i) + ".md" }
			for i := range files {
				r.create(t, path(i), "old")
			}
			r.clock.Set(r.t0.Add(time.Hour)) // all expired; what is written now is young

			start := make(chan struct{})
			var wg sync.WaitGroup
			results := make([]memory.Result, writers)
			for i := range writers {
				h, err := memory.New(r.store, memory.Options{Logger: quiet}) // a process of its own
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					<-start
					results[i] = h.Create(ctx, path(i), "new "+strconv.Itoa(i))
				})
			}
			var mu sync.Mutex
			deleted := map[string]int{}
			var sweepErrs []error
			for range sweeps {
				wg.Go(func() {
					<-start
					for info, err := range blob.Expire(ctx, r.store, false) {
						mu.Lock()
						if err != nil {
							sweepErrs = append(sweepErrs, err)
						} else {
							deleted[info.Key]++
						}
						mu.Unlock()
					}
				})
			}
			close(start)
			wg.Wait()

			acknowledged, refused := 0, 0
			for i, res := range results {
				if res.IsError {
					refused++
					t.Errorf("writer %d: %s", i, res.Text)
				} else {
					acknowledged++
				}
			}
			if len(sweepErrs) > 0 {
				t.Errorf("sweeps failed: %v", sweepErrs)
			}
			for key, n := range deleted {
				if n > 1 {
					t.Errorf("%s deleted by %d sweeps", key, n)
				}
			}
			kept, gone := 0, 0
			for i := range files {
				key, _ := memory.Resolve(path(i))
				data, _, err := r.raw.Get(ctx, key, 100)
				switch {
				case i < writers && (err != nil || string(data) != "new "+strconv.Itoa(i)):
					t.Errorf("%s, rewritten during the sweeps: %q, %v", key, data, err)
				case i < writers:
					kept++
				case !errors.Is(err, blob.ErrNotExist):
					t.Errorf("%s expired and was not deleted: %q, %v", key, data, err)
				default:
					gone++
					if deleted[key] != 1 {
						t.Errorf("%s was reported deleted by %d sweeps", key, deleted[key])
					}
				}
				// The old version's deletion is recorded once, as
				// policy:expire (by a sweep or by the create over it).
				vs, err := r.hist.History(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, v := range vs {
					if v.Op == history.OpDeleted {
						n++
						if v.Actor != blob.ExpireActor {
							t.Errorf("%s: deletion recorded as %q's", key, v.Actor)
						}
					}
				}
				if n != 1 {
					t.Errorf("%s: %d deletions recorded, want 1: %+v", key, n, vs)
				}
			}
			t.Logf("%d writers acknowledged, %d refused; %d files kept, %d deleted; sweeps deleted %d rewritten files' old versions",
				acknowledged, refused, kept, gone, len(deleted)-gone)
			if acknowledged != writers || kept != writers || gone != files-writers {
				t.Errorf("acknowledged %d, kept %d, deleted %d; want %d, %d, %d", acknowledged, kept, gone, writers, writers, files-writers)
			}
		})
	}
}

// On a mount table each mount's store expires by its own rules, which name
// paths as that store sees them alone; the sweep covers every expiring
// mount, with the table's keys.
func TestExpiryPerMount(t *testing.T) {
	ctx := t.Context()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: t0}
	tmp := storeurl.Expiring(mem.New(&mem.Options{Now: clock.Now}), scratchRule, clock.Now)
	tb, err := mount.New([]mount.Mount{{Name: "team", Store: tmp}, {Name: "keep", Store: mem.New(&mem.Options{Now: clock.Now})}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(tb, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/memories/team/scratch/a.md", "/memories/team/b.md", "/memories/keep/scratch/a.md"} {
		if res := h.Create(ctx, p, "x"); res.IsError {
			t.Fatal(res.Text)
		}
	}
	clock.Set(t0.Add(time.Hour))
	want := "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
		"2B\t/memories\n1B\t/memories/keep/\n1B\t/memories/keep/scratch/\n1B\t/memories/team/\n1B\t/memories/team/b.md"
	if res := h.View(ctx, "/memories", nil); res.Text != want {
		t.Errorf("view:\n%s\nwant:\n%s", res.Text, want)
	}
	var swept []string
	for info, err := range blob.Expire(ctx, tb, true) {
		if err != nil {
			t.Fatal(err)
		}
		swept = append(swept, info.Key)
	}
	if want := []string{"team/scratch/a.md"}; !slices.Equal(swept, want) {
		t.Errorf("the sweep's dry run: %q, want %q", swept, want)
	}
}

// Every golden case gives the same whole result through a store whose
// every file may expire but none has yet (a rule on /memories/**): the
// wrapper's extra looks change no text, on mem and on the file store.
func TestSpecThroughExpiry(t *testing.T) {
	everything := &policy.Policy{Expire: []policy.ExpireRule{{Path: "/memories/**", After: policy.MaxExpireAfter}}}
	for _, b := range []backend{{"mem", func(*testing.T) blob.Store { return mem.New(nil) }}, {"file", newFile}} {
		t.Run(b.name, func(t *testing.T) {
			memorytest.Run(t, func(t *testing.T) blob.Store { return storeurl.Expiring(b.newStore(t), everything, nil) })
		})
	}
}
