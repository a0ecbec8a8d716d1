package history_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// errCrash is what the crashing store answers from the crash on.
var errCrash = errors.New("crash: the process died")

// crashStore forwards calls to an inner store until call number at (1 for
// the first call), which fails, as does every call after it: the process
// died there. When landed is set, the crashing Put or Delete reaches the
// inner store before it fails (the process died after the write, before it
// heard back).
type crashStore struct {
	inner  blob.Store
	at     int
	landed bool
	mu     sync.Mutex
	n      int
}

// crash counts a call and reports whether it fails, and whether it is the
// call the process died in (the first that fails). Calls may come from
// several goroutines (a batch delete runs its deletes in parallel).
func (c *crashStore) crash() (fail, first bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return c.n >= c.at, c.n == c.at
}

func (c *crashStore) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *crashStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if fail, _ := c.crash(); fail {
		return nil, blob.Info{}, errCrash
	}
	return c.inner.Get(ctx, key, limit)
}

func (c *crashStore) Stat(ctx context.Context, key string) (blob.Info, error) {
	if fail, _ := c.crash(); fail {
		return blob.Info{}, errCrash
	}
	return c.inner.Stat(ctx, key)
}

func (c *crashStore) Put(ctx context.Context, key string, data []byte, cond blob.Cond) (blob.Info, error) {
	if fail, first := c.crash(); fail {
		if c.landed && first {
			_, _ = c.inner.Put(ctx, key, data, cond)
		}
		return blob.Info{}, errCrash
	}
	return c.inner.Put(ctx, key, data, cond)
}

func (c *crashStore) Delete(ctx context.Context, key string, cond blob.Cond) error {
	if fail, first := c.crash(); fail {
		if c.landed && first {
			_ = c.inner.Delete(ctx, key, cond)
		}
		return errCrash
	}
	return c.inner.Delete(ctx, key, cond)
}

func (c *crashStore) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		if fail, _ := c.crash(); fail {
			yield(blob.Info{}, errCrash)
			return
		}
		for info, err := range c.inner.List(ctx, prefix) {
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}

// rawRecord is a record's header as stored (the package's format).
type handlerT = memory.Handler

type rawRecord struct {
	ID, Op, Path, From, SHA256 string
	Prev, Ver                  string
	Redacted                   *history.Redaction
}

func rawRecords(t testing.TB, inner blob.Store) []rawRecord {
	t.Helper()
	var out []rawRecord
	for _, key := range recordKeys(t, inner) {
		data, _, err := inner.Get(t.Context(), key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		line, _, _ := bytes.Cut(data, []byte("\n"))
		var r rawRecord
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("record %s: %v", key, err)
		}
		out = append(out, r)
	}
	return out
}

// landLog is a store that notes every write that landed on it, so that a
// test can tell a record of a real change from a false one.
type landLog struct {
	blob.Store
	mu   sync.Mutex
	puts map[string]string // key + "\x00" + version -> SHA-256 of the content
	dels map[string]bool   // key + "\x00" + the version deleted
}

func newLandLog() *landLog {
	return &landLog{Store: mem.New(nil), puts: map[string]string{}, dels: map[string]bool{}}
}

func (l *landLog) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	info, err := l.Store.Put(ctx, key, data, c)
	if err == nil {
		l.mu.Lock()
		l.puts[key+"\x00"+info.Version] = sha(data)
		l.mu.Unlock()
	}
	return info, err
}

func (l *landLog) Delete(ctx context.Context, key string, c blob.Cond) error {
	err := l.Store.Delete(ctx, key, c)
	if err == nil {
		l.mu.Lock()
		l.dels[key+"\x00"+c.IfVersion] = true
		l.mu.Unlock()
	}
	return err
}

// checkTrue checks that every record claims a change that landed (the
// write of exactly that version with that content, the delete of exactly
// that version), and that no change has two records.
func checkTrue(t *testing.T, inner *landLog) {
	t.Helper()
	recs := rawRecords(t, inner)
	seen := map[string]bool{}
	inner.mu.Lock()
	defer inner.mu.Unlock()
	for _, r := range recs {
		id := r.Op + "\x00" + r.Path + "\x00" + r.Prev + "\x00" + r.Ver
		if seen[id] {
			t.Errorf("two records of one change: %+v", r)
		}
		seen[id] = true
		sum, put := inner.puts[r.Path+"\x00"+r.Ver]
		// A redaction replaces a version of the erased content by a token
		// (on S3 the version is the content's MD5): what such a record
		// claims was checked before the redaction rewrote it.
		if strings.HasPrefix(r.Ver, "redacted:") {
			put, sum = true, r.SHA256
		}
		del := func(path, prev string) bool {
			return strings.HasPrefix(prev, "redacted:") || inner.dels[path+"\x00"+prev]
		}
		switch r.Op {
		case "created", "modified":
			if !put || r.Redacted == nil && sum != r.SHA256 {
				t.Errorf("record %+v claims a write that did not land", r)
			}
		case "renamed":
			if !put || r.Redacted == nil && sum != r.SHA256 || !del(r.From, r.Prev) {
				t.Errorf("record %+v claims a move that did not land", r)
			}
		case "deleted":
			if !del(r.Path, r.Prev) {
				t.Errorf("record %+v claims a deletion that did not land", r)
			}
		default:
			t.Errorf("record %+v has an unknown operation", r)
		}
	}
}

// checkComplete checks that every file has a record of its present state.
func checkComplete(t *testing.T, inner blob.Store, paths ...string) {
	t.Helper()
	hs := wrap(t, inner, nil)
	for _, p := range paths {
		vs, err := hs.History(t.Context(), p)
		if err != nil {
			t.Fatalf("History(%q): %v", p, err)
		}
		if last := vs[len(vs)-1]; last.Op == history.OpUnrecorded || !last.Current {
			t.Errorf("History(%q) ends with %+v, want a recorded current version", p, last)
		}
	}
}

// A crashScenario is one command run over a store in a known state.
type crashScenario struct {
	name  string
	setup func(t *testing.T, h *memory.Handler, hs *history.Store)
	// run runs the command through hs (over the crashing store) and
	// reports whether it was acknowledged.
	run   func(ctx context.Context, h *memory.Handler, hs *history.Store) bool
	paths []string // the paths whose history must be complete after an acknowledged run
}

func setupFile(t *testing.T, h *memory.Handler, _ *history.Store) {
	must(t, h.Create(t.Context(), "/memories/a.md", "one\ntwo\n"))
}

func setupDir(t *testing.T, h *memory.Handler, _ *history.Store) {
	must(t, h.Create(t.Context(), "/memories/d/x.md", "x\n"))
	must(t, h.Create(t.Context(), "/memories/d/y.md", "y\n"))
}

func setupTwoVersions(t *testing.T, h *memory.Handler, _ *history.Store) {
	must(t, h.Create(t.Context(), "/memories/a.md", "secret\n"))
	must(t, h.StrReplace(t.Context(), "/memories/a.md", "secret", "public"))
}

// firstVersion is the id of the first version of a.md.
func firstVersion(ctx context.Context, hs *history.Store) string {
	vs, err := hs.History(ctx, "a.md")
	if err != nil || len(vs) == 0 {
		return "0000000000000000"
	}
	return vs[0].ID
}

var crashScenarios = []crashScenario{
	{"create", nil, func(ctx context.Context, h *memory.Handler, _ *history.Store) bool {
		return !h.Create(ctx, "/memories/a.md", "new\n").IsError
	}, []string{"a.md"}},
	{"str_replace", setupFile, func(ctx context.Context, h *memory.Handler, _ *history.Store) bool {
		return !h.StrReplace(ctx, "/memories/a.md", "two", "2").IsError
	}, []string{"a.md"}},
	{"insert", setupFile, func(ctx context.Context, h *memory.Handler, _ *history.Store) bool {
		return !h.Insert(ctx, "/memories/a.md", 1, "1.5\n").IsError
	}, []string{"a.md"}},
	{"delete file", setupFile, func(ctx context.Context, h *memory.Handler, _ *history.Store) bool {
		return !h.Delete(ctx, "/memories/a.md").IsError
	}, []string{"a.md"}},
	{"delete directory", setupDir, func(ctx context.Context, h *memory.Handler, _ *history.Store) bool {
		return !h.Delete(ctx, "/memories/d").IsError
	}, []string{"d/x.md", "d/y.md"}},
	{"rename file", setupFile, func(ctx context.Context, h *memory.Handler, _ *history.Store) bool {
		return !h.Rename(ctx, "/memories/a.md", "/memories/b.md").IsError
	}, []string{"a.md", "b.md"}},
	{"rename directory", setupDir, func(ctx context.Context, h *memory.Handler, _ *history.Store) bool {
		return !h.Rename(ctx, "/memories/d", "/memories/e").IsError
	}, []string{"d/x.md", "d/y.md", "e/x.md", "e/y.md"}},
	{"restore", setupTwoVersions, func(ctx context.Context, h *memory.Handler, hs *history.Store) bool {
		_, err := hs.Restore(ctx, "a.md", firstVersion(ctx, hs), func(ctx context.Context, key string, data []byte, ifVersion string) error {
			_, err := h.Write(ctx, memory.PathOf(key), data, ifVersion)
			return err
		})
		return err == nil
	}, []string{"a.md"}},
	{"redact", setupTwoVersions, func(ctx context.Context, _ *memory.Handler, hs *history.Store) bool {
		_, err := hs.Redact(ctx, "a.md", firstVersion(ctx, hs))
		return err == nil
	}, []string{"a.md"}},
}

// TestCrashAtEveryStep runs each command with the process dying at each of
// its storage calls in turn (the call failing, or landing and then
// failing), and checks after every crash that no record claims a change
// that did not land and no change has two records; after the run that
// completes, that every file has its record and the records are exactly
// one per change.
func TestCrashAtEveryStep(t *testing.T) {
	for _, sc := range crashScenarios {
		t.Run(sc.name, func(t *testing.T) {
			var wantRecords int
			for _, landed := range []bool{false, true} {
				for at := 1; ; at++ {
					inner := newLandLog()
					clean := wrap(t, inner, nil)
					if sc.setup != nil {
						sc.setup(t, newHandler(t, clean), clean)
					}
					base := len(recordKeys(t, inner))
					cs := &crashStore{inner: inner, at: at, landed: landed}
					hs := wrap(t, cs, nil)
					acked := sc.run(t.Context(), newHandler(t, hs), hs)
					checkTrue(t, inner)
					if t.Failed() {
						t.Fatalf("after a crash at call %d (landed %v)", at, landed)
					}
					if cs.calls() >= at {
						if acked && cs.calls() > at {
							// A crash in a call whose failure the command
							// may ignore (a best-effort cleanup) is fine
							// only if what it acknowledged is recorded.
							checkComplete(t, inner, sc.paths...)
						}
						continue
					}
					// No call crashed: the command ran to the end.
					if !acked {
						t.Fatalf("the command failed without a crash")
					}
					checkComplete(t, inner, existing(t, inner, sc.paths)...)
					got := len(recordKeys(t, inner)) - base
					if wantRecords == 0 {
						wantRecords = got
					}
					if got != wantRecords || got == 0 && sc.name != "redact" {
						t.Errorf("%d new records, want %d", got, wantRecords)
					}
					t.Logf("landed=%v: %d storage calls, %d new records", landed, at-1, got)
					break
				}
			}
		})
	}
}

// existing returns the paths that have records or exist.
func existing(t *testing.T, inner blob.Store, paths []string) []string {
	hs := wrap(t, inner, nil)
	var out []string
	for _, p := range paths {
		if _, err := hs.History(t.Context(), p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestInterruptedRenameCompletes kills a directory rename at each of its
// storage calls in turn (the call failing, or landing and then failing)
// and sends the same rename again through a fresh Store, as a model whose
// process died would: the second rename completes, the tree is exactly the
// moved one, and no record claims a change that did not land.
func TestInterruptedRenameCompletes(t *testing.T) {
	want := map[string]string{"e/x.md": "x\n", "e/y.md": "y\n"}
	for _, landed := range []bool{false, true} {
		for at := 1; ; at++ {
			inner := newLandLog()
			setupDir(t, newHandler(t, wrap(t, inner, nil)), nil)
			cs := &crashStore{inner: inner, at: at, landed: landed}
			first := newHandler(t, wrap(t, cs, nil)).Rename(t.Context(), "/memories/d", "/memories/e")
			if cs.calls() < at { // no call crashed: the rename ran to its end
				if first.IsError {
					t.Fatalf("the rename failed without a crash: %s", first.Text)
				}
				break
			}
			again := newHandler(t, wrap(t, inner, nil)).Rename(t.Context(), "/memories/d", "/memories/e")
			if got := memoryFiles(t, inner); !maps.Equal(got, want) {
				t.Fatalf("crash at call %d (landed %v), then the rename again (%q): the store holds %q, want %q",
					at, landed, again.Text, got, want)
			}
			if again.IsError && !first.IsError {
				t.Fatalf("crash at call %d (landed %v): the acknowledged rename, sent again: %q", at, landed, again.Text)
			}
			checkTrue(t, inner)
			if t.Failed() {
				t.Fatalf("after a crash at call %d (landed %v)", at, landed)
			}
		}
	}
}

// memoryFiles returns every memory file of s (no version record) with its
// content.
func memoryFiles(t *testing.T, s blob.Store) map[string]string {
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
