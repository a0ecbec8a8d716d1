package memory_test

import (
	"bytes"
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
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// secret is what a storage error may carry and the model must never see.
const secret = "secret-host:/var/lib/x key=AKIAIOSFODNN7EXAMPLE"

var errSecret = errors.New("dial " + secret + ": connection refused")

// storageFailed is the whole Result text of a generic storage failure.
const storageFailed = "Error: The memory storage failed: the storage backend returned an error"

// faultStore forwards to an inner store and fails one call with err: the
// nth call (1-based) of the method named fail, or every call of it when nth
// is 0. The failing call does not reach the inner store. It offers Rename (blob.Tree)
// and DeleteTree (blob.Tree) only when the inner store has them (otherwise it reports
// errors.ErrUnsupported, so the blob fallbacks run through its core
// methods, which can fail too).
type faultStore struct {
	inner blob.Store
	fail  string // "Get", "Stat", "Put", "Delete", "List", "Rename" or "DeleteTree"
	nth   int
	err   error

	mu    sync.Mutex
	calls map[string]int
}

// hit counts a call of method and reports whether it must fail.
func (f *faultStore) hit(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[method]++
	return method == f.fail && (f.nth == 0 || f.calls[method] == f.nth)
}

func (f *faultStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if f.hit("Get") {
		return nil, blob.Info{}, f.err
	}
	return f.inner.Get(ctx, key, limit)
}

func (f *faultStore) Stat(ctx context.Context, key string) (blob.Info, error) {
	if f.hit("Stat") {
		return blob.Info{}, f.err
	}
	return f.inner.Stat(ctx, key)
}

func (f *faultStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if f.hit("Put") {
		return blob.Info{}, f.err
	}
	return f.inner.Put(ctx, key, data, c)
}

func (f *faultStore) Delete(ctx context.Context, key string, c blob.Cond) error {
	if f.hit("Delete") {
		return f.err
	}
	return f.inner.Delete(ctx, key, c)
}

func (f *faultStore) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	if f.hit("List") {
		return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, f.err) }
	}
	return f.inner.List(ctx, prefix)
}

func (f *faultStore) Rename(ctx context.Context, src, dst string) error {
	r, ok := f.inner.(blob.Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	if f.hit("Rename") {
		return f.err
	}
	return r.Rename(ctx, src, dst)
}

func (f *faultStore) DeleteTree(ctx context.Context, dir string) error {
	d, ok := f.inner.(blob.Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	if f.hit("DeleteTree") {
		return f.err
	}
	return d.DeleteTree(ctx, dir)
}

// faultScenario is one command on a seeded store.
type faultScenario struct {
	name  string
	opts  memory.Options
	input string
	// moved maps the keys a rename moves to their new keys: after a
	// failure each must be at its old or new key with its content.
	moved map[string]string
}

func faultScenarios() []faultScenario {
	return []faultScenario{
		{name: "view file", input: `{"command":"view","path":"/memories/notes/a.md"}`},
		{name: "view image", input: `{"command":"view","path":"/memories/pic/logo.png"}`},
		{name: "view directory", input: `{"command":"view","path":"/memories/notes"}`},
		{name: "view root", input: `{"command":"view","path":"/memories"}`},
		{name: "view missing", input: `{"command":"view","path":"/memories/nope"}`},
		{name: "create", input: `{"command":"create","path":"/memories/notes/c.md","file_text":"c"}`},
		{name: "create without file limit", opts: memory.Options{MaxFiles: -1}, input: `{"command":"create","path":"/memories/notes/c.md","file_text":"c"}`},
		{name: "create overwriting", opts: memory.Options{Overwrite: true}, input: `{"command":"create","path":"/memories/notes/a.md","file_text":"c"}`},
		{name: "str_replace", input: `{"command":"str_replace","path":"/memories/notes/a.md","old_str":"beta","new_str":"gamma"}`},
		{name: "str_replace on a directory", input: `{"command":"str_replace","path":"/memories/notes","old_str":"beta"}`},
		{name: "insert", input: `{"command":"insert","path":"/memories/notes/a.md","insert_line":0,"insert_text":"top"}`},
		{name: "insert on a missing file", input: `{"command":"insert","path":"/memories/notes/z.md","insert_line":0,"insert_text":"top"}`},
		{name: "delete file", input: `{"command":"delete","path":"/memories/notes/a.md"}`},
		{name: "delete directory", input: `{"command":"delete","path":"/memories/proj"}`},
		{name: "rename file", input: `{"command":"rename","old_path":"/memories/notes/a.md","new_path":"/memories/notes/z.md"}`,
			moved: map[string]string{"notes/a.md": "notes/z.md"}},
		{name: "rename file elsewhere", input: `{"command":"rename","old_path":"/memories/notes/a.md","new_path":"/memories/x/y/z.md"}`,
			moved: map[string]string{"notes/a.md": "x/y/z.md"}},
		{name: "rename 5-file directory", input: `{"command":"rename","old_path":"/memories/proj","new_path":"/memories/archive/proj"}`,
			moved: map[string]string{"proj/1.md": "archive/proj/1.md", "proj/2.md": "archive/proj/2.md", "proj/3.md": "archive/proj/3.md",
				"proj/sub/4": "archive/proj/sub/4", "proj/sub/5": "archive/proj/sub/5"}},
	}
}

func TestStorageFaults(t *testing.T) {
	seedFiles := map[string]string{
		"notes/a.md":   "alpha\nbeta\n",
		"notes/b.md":   "bee\n",
		"proj/1.md":    "one",
		"proj/2.md":    "two",
		"proj/3.md":    "three",
		"proj/sub/4":   "four",
		"proj/sub/5":   "five",
		"pic/logo.png": "\x89PNG\r\n\x1a\nrest",
	}
	for _, kind := range []string{"mem", "plain"} {
		for _, sc := range faultScenarios() {
			// A run without faults tells which calls the command makes.
			dry := &faultStore{inner: newStore(t, kind, seedFiles)}
			h, err := memory.New(dry, sc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if r := h.Execute(t.Context(), []byte(sc.input)); strings.HasPrefix(r.Text, "Error: The memory storage failed") {
				t.Fatalf("%s/%s without faults: %q", kind, sc.name, r.Text)
			}
			for _, method := range slices.Sorted(maps.Keys(dry.calls)) {
				for nth := range dry.calls[method] + 1 { // 0: every call
					name := fmt.Sprintf("%s/%s/%s#%d", kind, sc.name, method, nth)
					t.Run(name, func(t *testing.T) {
						runFault(t, kind, sc, seedFiles, &faultStore{fail: method, nth: nth, err: errSecret})
					})
				}
			}
		}
	}
}

// newStore returns a seeded mem store, or for kind "plain" one without
// capabilities.
func newStore(t *testing.T, kind string, files map[string]string) blob.Store {
	inner := mem.New(nil)
	seed(t, inner, files)
	if kind == "plain" {
		return plainStore{inner}
	}
	return inner
}

// runFault runs sc over fs (whose inner store it sets) and checks that the
// command failed as a storage failure that leaks nothing, that the log has
// the detail, and that no file was lost.
func runFault(t *testing.T, kind string, sc faultScenario, files map[string]string, fs *faultStore) {
	fs.inner = newStore(t, kind, files)
	var logs bytes.Buffer
	opts := sc.opts
	opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	h, err := memory.New(fs, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := h.Execute(t.Context(), []byte(sc.input))
	if got.Text != storageFailed || !got.IsError || got.Image != nil {
		t.Errorf("got %+v, want the error %q", got, storageFailed)
	}
	if strings.Contains(got.Text, secret) {
		t.Errorf("the result leaks the storage error: %q", got.Text)
	}
	log := logs.String()
	for _, want := range []string{"level=ERROR", "command=", "path=/memories", secret} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	after := contents(t, fs.inner)
	delete(after, memory.FileCountKey) // checked by TestCountCrashes
	switch {
	case sc.moved != nil:
		checkMoved(t, files, after, sc.moved)
	case sc.name == "delete directory":
		// A tree delete may stop halfway; what is left is intact.
		for key, content := range after {
			if files[key] != content {
				t.Errorf("%q: holds %q, want %q or nothing", key, content, files[key])
			}
		}
	case !maps.Equal(after, files):
		t.Errorf("a failed command changed the store:\n got %q\nwant %q", after, files)
	}
}

// checkMoved checks that after a failed move each moved file is at its old
// key, its new key or both, intact, and that nothing else changed.
func checkMoved(t *testing.T, before, after, moved map[string]string) {
	t.Helper()
	for from, to := range moved {
		want := before[from]
		got1, atOld := after[from]
		got2, atNew := after[to]
		if !atOld && !atNew {
			t.Errorf("%q is lost: at neither %q nor %q", want, from, to)
		}
		if atOld && got1 != want || atNew && got2 != want {
			t.Errorf("%q changed: %q at %q, %q at %q", want, got1, from, got2, to)
		}
	}
	newKeys := map[string]bool{}
	for _, to := range moved {
		newKeys[to] = true
	}
	for key, content := range after {
		if _, isMoved := moved[key]; !isMoved && !newKeys[key] && before[key] != content {
			t.Errorf("%q: unexpected content %q", key, content)
		}
	}
	for key := range before {
		if _, isMoved := moved[key]; !isMoved {
			if _, ok := after[key]; !ok {
				t.Errorf("%q: lost", key)
			}
		}
	}
}

// causeError is a storage error with its own safe description.
type causeError struct{ cause string }

func (e causeError) Error() string      { return "decrypt " + secret + ": bad MAC" }
func (e causeError) ModelCause() string { return e.cause }

var _ memory.Causer = causeError{}

// The model reads a short cause chosen by the error's kind.
func TestStorageFailureCauses(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("get %s: %w", secret, context.Canceled), "the request was cancelled"},
		{fmt.Errorf("get %s: %w", secret, context.DeadlineExceeded), "the request timed out"},
		{fmt.Errorf("put %s: %w", secret, blob.ErrReadOnly), "the store is read-only"},
		{fmt.Errorf("get %s: %w", secret, blob.ErrInvalidKey), "the store rejected the path"},
		{errSecret, "the storage backend returned an error"},
		{fmt.Errorf("layer: %w", causeError{"an object could not be decrypted"}), "an object could not be decrypted"},
		{errors.Join(errSecret, causeError{"an object could not be decrypted"}), "an object could not be decrypted"},
		{fmt.Errorf("layer: %w: %w", causeError{""}, context.Canceled), "the request was cancelled"},
	} {
		fs := &faultStore{inner: mem.New(nil), fail: "Get", err: c.err}
		seed(t, fs.inner, map[string]string{"a.md": "a"})
		h, err := memory.New(fs, memory.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		got := h.Execute(t.Context(), []byte(`{"command":"view","path":"/memories/a.md"}`))
		if want := "Error: The memory storage failed: " + c.want; got.Text != want || !got.IsError {
			t.Errorf("%v:\n got %+v\nwant %q", c.err, got, want)
		}
	}
}

// A context that is already done, or ends while a command waits to retry,
// fails the command with the context's cause.
func TestContextEndsCommand(t *testing.T) {
	s := mem.New(nil)
	seed(t, s, map[string]string{"a.md": "one\n"})
	h, err := memory.New(s, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	got := h.Execute(ctx, []byte(`{"command":"view","path":"/memories/a.md"}`))
	if want := "Error: The memory storage failed: the request was cancelled"; got.Text != want {
		t.Errorf("cancelled: got %q, want %q", got.Text, want)
	}

	// Every write loses to a rival; the deadline ends the retries.
	rival := &rivalStore{Store: s, rivals: 1 << 30, edit: func(old string) string { return old }}
	h, err = memory.New(rival, memory.Options{Retries: 1 << 20, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	got = h.Execute(ctx, []byte(`{"command":"insert","path":"/memories/a.md","insert_line":0,"insert_text":"x"}`))
	if want := "Error: The memory storage failed: the request timed out"; got.Text != want {
		t.Errorf("deadline during retries: got %q, want %q", got.Text, want)
	}
	if got := contents(t, s)["a.md"]; got != "one\n" {
		t.Errorf("a.md: %q, want it unchanged", got)
	}
}
