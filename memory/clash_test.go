package memory_test

import (
	"context"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/mount"
)

// hidingStore lists like MinIO: a key under a key that exists as an object
// is left out of every listing, though Get and Stat find it. It reports
// blob.Traits.HidesUnderObjects's answer hides. beforePut, if set, runs before each Put
// (once per key at most), so a test can let a rival in at that moment.
//
// Its listings also leave out the handler's witnesses, which the handler
// only ever Stats, so that the golden cases, which compare every listed key
// before and after, see the memory files alone.
type hidingStore struct {
	blob.Store
	hides bool

	mu        sync.Mutex
	beforePut map[string]func()
}

func newHidingStore(hides bool) *hidingStore {
	return &hidingStore{Store: mem.New(nil), hides: hides}
}

func (s *hidingStore) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen, HidesUnderObjects: s.hides}
}

func (s *hidingStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	s.mu.Lock()
	f := s.beforePut[key]
	delete(s.beforePut, key)
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return s.Store.Put(ctx, key, data, c)
}

func (s *hidingStore) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		infos, err := blob.ListAll(ctx, s.Store, prefix)
		if err != nil {
			yield(blob.Info{}, err)
			return
		}
		for _, info := range infos {
			if s.underObject(ctx, info.Key) || memory.IsWitness(info.Key) {
				continue
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

// underObject reports whether an ancestor of key exists as an object.
func (s *hidingStore) underObject(ctx context.Context, key string) bool {
	for i := range len(key) {
		if key[i] == '/' {
			if _, err := s.Store.Stat(ctx, key[:i]); err == nil {
				return true
			}
		}
	}
	return false
}

func quietHandler(t *testing.T, s blob.Store) *memory.Handler {
	t.Helper()
	h, err := memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// memoryKeys lists the keys of s that are no bookkeeping, whether or not a
// listing shows them: it lists the raw store beneath the fake.
func memoryKeys(t *testing.T, s *hidingStore) []string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s.Store, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, info := range infos {
		if !blob.IsReserved(info.Key) {
			keys = append(keys, info.Key)
		}
	}
	return keys
}

// The interleaving MinIO loses: the create of t/a/b runs whole between the
// survey of t/a and its Put, so the file's look beneath itself lists
// nothing. With the store's HidesUnderObjects trait on, the file's create finds the
// witness of t/a, withdraws, looks with t/a absent, and reports that the
// name exists; with it off (the fake then behaves as MinIO did before), both
// stay, which is what the protocol is for.
func TestCreateFileOverHiddenDirectory(t *testing.T) {
	for _, tt := range []struct {
		hides    bool
		wantFile string
		wantKeys []string
	}{
		{true, "Error: File /memories/t/a already exists", []string{"t/a/b"}},
		{false, "File created successfully at: /memories/t/a", []string{"t/a", "t/a/b"}},
	} {
		s := newHidingStore(tt.hides)
		var dir memory.Result
		s.beforePut = map[string]func(){"t/a": func() {
			dir = quietHandler(t, s).Create(t.Context(), "/memories/t/a/b", "b")
		}}
		file := quietHandler(t, s).Create(t.Context(), "/memories/t/a", "a")
		if dir.Text != "File created successfully at: /memories/t/a/b" || dir.IsError {
			t.Errorf("hides=%v: create /memories/t/a/b: %+v", tt.hides, dir)
		}
		if file.Text != tt.wantFile || file.IsError != strings.HasPrefix(tt.wantFile, "Error: ") {
			t.Errorf("hides=%v: create /memories/t/a: %q (is_error %v), want %q", tt.hides, file.Text, file.IsError, tt.wantFile)
		}
		if got := memoryKeys(t, s); !slices.Equal(got, tt.wantKeys) {
			t.Errorf("hides=%v: the store holds %q, want %q", tt.hides, got, tt.wantKeys)
		}
	}
}

// The mirror case: the file t/a is created whole between the survey of
// t/a/b and its Put. The directory's create finds the file by Stat, as on
// every store, and withdraws.
func TestCreateUnderHiddenFile(t *testing.T) {
	s := newHidingStore(true)
	var file memory.Result
	s.beforePut = map[string]func(){"t/a/b": func() {
		file = quietHandler(t, s).Create(t.Context(), "/memories/t/a", "a")
	}}
	dir := quietHandler(t, s).Create(t.Context(), "/memories/t/a/b", "b")
	if file.Text != "File created successfully at: /memories/t/a" || file.IsError {
		t.Errorf("create /memories/t/a: %+v", file)
	}
	if want := "Error: The path /memories/t/a is a file, not a directory"; dir.Text != want || !dir.IsError {
		t.Errorf("create /memories/t/a/b: %q, want %q", dir.Text, want)
	}
	if got, want := memoryKeys(t, s), []string{"t/a"}; !slices.Equal(got, want) {
		t.Errorf("the store holds %q, want %q", got, want)
	}
}

// A witness outlives its directory: once t/a/b is deleted, the file t/a can
// be created, and a directory again after that file is deleted.
func TestCreateAfterStaleWitness(t *testing.T) {
	s := newHidingStore(true)
	h := quietHandler(t, s)
	ctx := t.Context()
	for _, step := range []struct {
		do   func() memory.Result
		want string
	}{
		{func() memory.Result { return h.Create(ctx, "/memories/t/a/b", "b") }, "File created successfully at: /memories/t/a/b"},
		{func() memory.Result { return h.Delete(ctx, "/memories/t/a/b") }, "Successfully deleted /memories/t/a/b"},
		{func() memory.Result { return h.Create(ctx, "/memories/t/a", "a") }, "File created successfully at: /memories/t/a"},
		{func() memory.Result { return h.Delete(ctx, "/memories/t/a") }, "Successfully deleted /memories/t/a"},
		{func() memory.Result { return h.Create(ctx, "/memories/t/a/b", "b2") }, "File created successfully at: /memories/t/a/b"},
	} {
		if r := step.do(); r.Text != step.want || r.IsError {
			t.Fatalf("got %q (is_error %v), want %q", r.Text, r.IsError, step.want)
		}
	}
	if got, want := memoryKeys(t, s), []string{"t/a/b"}; !slices.Equal(got, want) {
		t.Errorf("the store holds %q, want %q", got, want)
	}
	infos, err := blob.ListAll(ctx, s.Store, memory.WitnessDir+"/")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if !memory.IsWitness(info.Key) {
			t.Errorf("IsWitness(%q) = false", info.Key)
		}
	}
	if len(infos) == 0 {
		t.Error("no witness was written")
	}
}

// The contract's races and golden cases hold over a store that lists like
// MinIO and says so: 100 racing pairs leave no name both, and every golden
// case sees the same results and files (the witnesses are bookkeeping).
func TestHidingStoreSuites(t *testing.T) {
	newStore := func(t *testing.T) blob.Store { return newHidingStore(true) }
	t.Run("file or directory", func(t *testing.T) { memorytest.RunFileOrDirectory(t, newStore) })
	t.Run("spec", func(t *testing.T) { memorytest.Run(t, newStore) })
}

func TestIsWitness(t *testing.T) {
	for key, want := range map[string]bool{
		memory.WitnessDir + "/0123":         true,
		"team/" + memory.WitnessDir + "/0a": true,
		memory.WitnessDir:                   false,
		"a/b/" + memory.WitnessDir + "/0a":  false,
		".cloudmem/files":                   false,
		"notes/names/x":                     false,
	} {
		if got := memory.IsWitness(key); got != want {
			t.Errorf("IsWitness(%q) = %v, want %v", key, got, want)
		}
	}
}

// The calls of a create on a store whose listing hides keys, as the call
// table states them, for a key of d = 2 segments: on top of the usual ones
// (1 Put, 1 List, d-1 Stat), d-1 Put (the ancestors' witnesses) and 1 Stat
// (the key's own) while the key's witness does not exist; once it does,
// d+1 Put, 1 Delete, 5d-1 Stat and 2 List more.
func TestCreateCallsOnHidingStore(t *testing.T) {
	opts := memory.Options{MaxFiles: -1, Logger: slog.New(slog.DiscardHandler)}
	calls := func(hides bool, prepare func(h *memory.Handler)) blob.Counts {
		t.Helper()
		s := newHidingStore(hides)
		counter := blob.NewCounter(s)
		h, err := memory.New(counter, opts)
		if err != nil {
			t.Fatal(err)
		}
		if prepare != nil {
			prepare(h)
		}
		counter.Reset()
		if r := h.Create(t.Context(), "/memories/t/a", "a"); r.Text != "File created successfully at: /memories/t/a" {
			t.Fatalf("create /memories/t/a: %+v", r)
		}
		return counter.Counts()
	}
	// A directory t/a that was deleted leaves the witness of t/a behind.
	wasDir := func(h *memory.Handler) {
		h.Create(t.Context(), "/memories/t/a/b", "b")
		h.Delete(t.Context(), "/memories/t/a/b")
	}
	for _, tt := range []struct {
		name    string
		hides   bool
		prepare func(h *memory.Handler)
		want    blob.Counts
	}{
		{"listing shows every key", false, nil, blob.Counts{Stat: 1, List: 1, Put: 1}},
		{"listing hides, no witness", true, nil, blob.Counts{Stat: 2, List: 1, Put: 2}},
		{"listing hides, stale witness", true, wasDir, blob.Counts{Stat: 11, List: 3, Put: 5, Delete: 1}},
	} {
		if got := calls(tt.hides, tt.prepare); got != tt.want {
			t.Errorf("%s: calls %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// On a mount table the witnesses lie in the mount of the name, where the
// mounted store keeps them under its own root, and the interleaving MinIO
// loses is refused there too.
func TestCreateFileOverHiddenDirectoryInMount(t *testing.T) {
	s := newHidingStore(true)
	table, err := mount.New([]mount.Mount{{Name: "me", Store: s}})
	if err != nil {
		t.Fatal(err)
	}
	var dir memory.Result
	s.beforePut = map[string]func(){"t/a": func() {
		dir = quietHandler(t, table).Create(t.Context(), "/memories/me/t/a/b", "b")
	}}
	file := quietHandler(t, table).Create(t.Context(), "/memories/me/t/a", "a")
	if dir.Text != "File created successfully at: /memories/me/t/a/b" {
		t.Errorf("create /memories/me/t/a/b: %+v", dir)
	}
	if want := "Error: File /memories/me/t/a already exists"; file.Text != want {
		t.Errorf("create /memories/me/t/a: %q, want %q", file.Text, want)
	}
	if got, want := memoryKeys(t, s), []string{"t/a/b"}; !slices.Equal(got, want) {
		t.Errorf("the mount holds %q, want %q", got, want)
	}
	witnesses, err := blob.ListAll(t.Context(), s.Store, memory.WitnessDir+"/")
	if err != nil {
		t.Fatal(err)
	}
	if len(witnesses) == 0 {
		t.Error("the mounted store holds no witness")
	}
}

// On a store whose listing hides keys, a Write of a name that was once a
// directory takes the recheck, which writes the file a second time: with
// the bytes written, not the (empty) text of a create.
func TestHidingStoreRecheckKeepsWrittenBytes(t *testing.T) {
	h, err := memory.New(newHidingStore(true), memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h.Create(t.Context(), "/memories/t/a/b", "b")
	h.Delete(t.Context(), "/memories/t/a/b") // leaves the witness of t/a
	if _, err := h.Write(t.Context(), "/memories/t/a", []byte("written bytes\n"), ""); err != nil {
		t.Fatal(err)
	}
	got, err := h.ReadFile(t.Context(), "/memories/t/a")
	if err != nil || string(got) != "written bytes\n" {
		t.Errorf("read back %q, %v; want %q", got, err, "written bytes\n")
	}
}
