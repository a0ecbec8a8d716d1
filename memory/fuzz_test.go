package memory_test

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

// recorder is a Store that records the keys and prefixes it is asked for.
// Embedding only blob.Store hides the inner store's capabilities, so moves
// and tree deletes reach the recorder key by key.
type recorder struct {
	blob.Store
	mu       sync.Mutex
	keys     []string
	prefixes []string
}

func (r *recorder) key(k string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keys = append(r.keys, k)
}

func (r *recorder) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	r.key(key)
	return r.Store.Get(ctx, key, limit)
}

func (r *recorder) Stat(ctx context.Context, key string) (blob.Info, error) {
	r.key(key)
	return r.Store.Stat(ctx, key)
}

func (r *recorder) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	r.key(key)
	return r.Store.Put(ctx, key, data, c)
}

func (r *recorder) Delete(ctx context.Context, key string, c blob.Cond) error {
	r.key(key)
	return r.Store.Delete(ctx, key, c)
}

func (r *recorder) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	r.mu.Lock()
	r.prefixes = append(r.prefixes, prefix)
	r.mu.Unlock()
	return r.Store.List(ctx, prefix)
}

// fuzzStore returns a store holding a few files, bookkeeping included,
// wrapped in a recorder and a counter.
func fuzzStore(t *testing.T) (*recorder, *blob.Counter) {
	t.Helper()
	inner := mem.New(nil)
	for k, v := range map[string]string{"a.md": "one\ntwo\n", "d/x.md": "x", "d/.h": "h", ".cloudmem/key": "k"} {
		if _, err := inner.Put(context.Background(), k, []byte(v), blob.Cond{}); err != nil {
			t.Fatalf("Put %q: %v", k, err)
		}
	}
	rec := &recorder{Store: inner}
	return rec, blob.NewCounter(rec)
}

func fuzzHandler(t *testing.T, s blob.Store) *memory.Handler {
	t.Helper()
	h, err := memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("memory.New: %v", err)
	}
	return h
}

// refusedUpFront reports whether text is an error that the contract
// produces before any storage call.
func refusedUpFront(text string) bool {
	for _, p := range []string{"Error: Invalid memory command input: ", "Error: Parameter `", "Error: Unknown memory command: ", "Error: Path "} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// checkShape checks what holds for every Result.
func checkShape(t *testing.T, input []byte, r memory.Result) {
	t.Helper()
	switch {
	case r.IsError && !strings.HasPrefix(r.Text, "Error: "):
		t.Errorf("input %q: error without the Error: prefix: %q", input, r.Text)
	case !r.IsError && strings.HasPrefix(r.Text, "Error: "):
		t.Errorf("input %q: success that reads as an error: %q", input, r.Text)
	case r.Image != nil && (r.IsError || r.Text != ""):
		t.Errorf("input %q: an image with IsError=%v and text %q", input, r.IsError, r.Text)
	case !utf8.ValidString(r.Text):
		t.Errorf("input %q: result text is not UTF-8: %q", input, r.Text)
	}
}

// FuzzPaths sends any path to view and create: whatever the handler
// accepts must map to valid keys outside .cloudmem, and must have started
// with /memories; whatever it refuses must not have reached the store.
func FuzzPaths(f *testing.F) {
	for _, p := range []string{
		"/memories", "/memories/", "/memories//", "/memories/.", "/memoriesX", "/memories_backup/x", "memories/x", "/etc/passwd", "",
		"/memories/..", "/memories/a/../b", "/memories/%2e%2e/x", "/memories/%2E", "/memories/a%2fb", "/memories/a%5Cb", "/memories/%25",
		"/memories/a\\b", "/memories/a\x00b", "/memories/\x1f", "/memories/\x7f", "/memories/\u0085", "/memories/.cloudmem", "/memories/.cloudmem/x",
		"/memories/./.cloudmem/x", "/memories//.cloudmem", "/memories/a/.cloudmem", "/memories/.cloudmemX", "/memories/a.md", "/memories/d/x.md/y",
		"/memories/" + strings.Repeat("a", 255), "/memories/" + strings.Repeat("a", 256), "/memories/" + strings.Repeat("/", 1020) + "a",
		"/memories/\xff", "/memories/\ud7ff", "/memories/e\u0301", "/memories/...", "/memories/..a",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		for _, command := range []string{"view", "create"} {
			rec, counter := fuzzStore(t)
			input, err := json.Marshal(map[string]string{"command": command, "path": path, "file_text": "x"})
			if err != nil {
				t.Fatal(err)
			}
			var sent struct{ Path string } // the path as the handler receives it (json.Marshal coerces to UTF-8)
			if err := json.Unmarshal(input, &sent); err != nil {
				t.Fatal(err)
			}
			r := fuzzHandler(t, counter).Execute(context.Background(), input)
			checkShape(t, input, r)
			if refusedUpFront(r.Text) {
				if n := counter.Counts(); n.Total() != 0 {
					t.Errorf("%s %q: refused with %q after %+v storage calls", command, sent.Path, r.Text, n)
				}
				continue
			}
			if sent.Path != "/memories" && !strings.HasPrefix(sent.Path, "/memories/") {
				t.Errorf("%s %q accepted (%q)", command, sent.Path, r.Text)
			}
			for _, k := range rec.keys {
				if err := blob.CheckKey(k); err != nil {
					t.Errorf("%s %q: store asked for key %q: %v", command, sent.Path, k, err)
				}
				if k != memory.FileCountKey && (k == ".cloudmem" || strings.HasPrefix(k, ".cloudmem/")) { // the handler's own count aside
					t.Errorf("%s %q: store asked for bookkeeping key %q", command, sent.Path, k)
				}
			}
			for _, p := range rec.prefixes {
				if err := blob.CheckPrefix(p); err != nil {
					t.Errorf("%s %q: store asked to list %q: %v", command, sent.Path, p, err)
				}
				if p == ".cloudmem" || strings.HasPrefix(p, ".cloudmem/") {
					t.Errorf("%s %q: store asked to list bookkeeping prefix %q", command, sent.Path, p)
				}
			}
		}
	})
}

// FuzzDecode sends any bytes: Execute always returns a well-formed Result,
// and input it refuses while decoding never reaches the store.
func FuzzDecode(f *testing.F) {
	for _, c := range memorytest.Cases() {
		if len(c.Input) < 4096 {
			f.Add([]byte(c.Input))
		}
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		_, counter := fuzzStore(t)
		r := fuzzHandler(t, counter).Execute(context.Background(), input)
		checkShape(t, input, r)
		if refusedUpFront(r.Text) {
			if n := counter.Counts(); n.Total() != 0 {
				t.Errorf("input %q: refused with %q after %+v storage calls", input, r.Text, n)
			}
		}
	})
}
