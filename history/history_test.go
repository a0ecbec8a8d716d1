package history_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// clock is a fake clock that advances one second per reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func newHandler(t testing.TB, s blob.Store) *memory.Handler {
	t.Helper()
	h, err := memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// writer is the WriteFunc of a memory handler over hs.
func writer(t testing.TB, hs *history.Store) history.WriteFunc {
	h := newHandler(t, hs)
	return func(ctx context.Context, key string, data []byte, ifVersion string) error {
		_, err := h.Write(ctx, memory.PathOf(key), data, ifVersion)
		return err
	}
}

// must fails the test when a memory command failed.
func must(t testing.TB, r memory.Result) {
	t.Helper()
	if r.IsError {
		t.Fatalf("command failed: %s", r.Text)
	}
}

// row is the part of a Version a test can predict (the ids are random).
type row struct {
	Op      history.Op
	Path    string
	From    string
	Actor   string
	Size    int64
	Content string // "" for no content
	Current bool
	Redact  string // the redactor, "" when not redacted
}

// rows projects vs, reading each version's content with Show.
func rows(t testing.TB, hs *history.Store, key string, vs []history.Version) []row {
	t.Helper()
	out := make([]row, len(vs))
	for i, v := range vs {
		out[i] = row{Op: v.Op, Path: v.Path, From: v.From, Actor: v.Actor, Size: v.Size, Current: v.Current}
		if v.Redacted != nil {
			out[i].Redact = v.Redacted.Actor
		}
		if v.ID == "" {
			continue
		}
		data, _, err := hs.Show(t.Context(), key, v.ID)
		switch {
		case err == nil:
			out[i].Content = string(data)
			if v.SHA256 != sha(data) || int64(len(data)) != v.Size {
				t.Errorf("version %s: size %d sha %s, content has %d bytes sha %s", v.ID, v.Size, v.SHA256, len(data), sha(data))
			}
		case errors.Is(err, history.ErrNoContent):
		default:
			t.Fatalf("Show(%q, %s): %v", key, v.ID, err)
		}
	}
	return out
}

func historyRows(t testing.TB, hs *history.Store, key string) []row {
	t.Helper()
	vs, err := hs.History(t.Context(), key)
	if err != nil {
		t.Fatalf("History(%q): %v", key, err)
	}
	return rows(t, hs, key, vs)
}

func checkRows(t testing.TB, what string, got, want []row) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", what, fmtRows(got), fmtRows(want))
	}
}

func fmtRows(rs []row) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\n  %+v", r)
	}
	return b.String()
}

// recordKeys lists the raw record objects of inner.
func recordKeys(t testing.TB, inner blob.Store) []string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), inner, history.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, i := range infos {
		keys = append(keys, i.Key)
	}
	return keys
}

// TestLifecycle follows one file through every operation of the memory
// tool and checks its whole history after each: the versions replay to the
// content each change left, renames carry the history along, and a deleted
// or moved-away path keeps its history.
func TestLifecycle(t *testing.T) {
	inner := mem.New(nil)
	hs := wrap(t, inner, &history.Options{Actor: "default@host", Now: newClock().Now})
	h := newHandler(t, hs)
	ctx := blob.WithActor(t.Context(), "session 42")

	must(t, h.Create(ctx, "/memories/a.md", "one\n"))
	must(t, h.StrReplace(t.Context(), "/memories/a.md", "one", "two")) // no actor on ctx: the default
	must(t, h.Insert(ctx, "/memories/a.md", 1, "three\n"))
	must(t, h.Rename(ctx, "/memories/a.md", "/memories/dir/b.md"))
	must(t, h.StrReplace(ctx, "/memories/dir/b.md", "three", "four"))

	created := row{Op: history.OpCreated, Path: "a.md", Actor: "session 42", Size: 4, Content: "one\n"}
	modified := row{Op: history.OpModified, Path: "a.md", Actor: "default@host", Size: 4, Content: "two\n"}
	inserted := row{Op: history.OpModified, Path: "a.md", Actor: "session 42", Size: 10, Content: "two\nthree\n"}
	renamed := row{Op: history.OpRenamed, Path: "dir/b.md", From: "a.md", Actor: "session 42", Size: 10, Content: "two\nthree\n"}
	edited := row{Op: history.OpModified, Path: "dir/b.md", Actor: "session 42", Size: 9, Content: "two\nfour\n", Current: true}
	checkRows(t, "history of the renamed file", historyRows(t, hs, "dir/b.md"), []row{created, modified, inserted, renamed, edited})
	renamedAway := renamed
	renamedAway.Current = true
	checkRows(t, "history of the old path", historyRows(t, hs, "a.md"), []row{created, modified, inserted, renamedAway})

	must(t, h.Delete(ctx, "/memories/dir"))
	edited.Current = false
	deleted := row{Op: history.OpDeleted, Path: "dir/b.md", Actor: "session 42", Current: true}
	checkRows(t, "history of the deleted file", historyRows(t, hs, "dir/b.md"), []row{created, modified, inserted, renamed, edited, deleted})

	// Every change wrote exactly one record, and nothing else is in the
	// store but the handler's file count (which history does not record).
	if n := len(recordKeys(t, inner)); n != 6 {
		t.Errorf("%d records, want 6 (one per change)", n)
	}
	all, err := blob.ListAll(t.Context(), inner, "")
	all = slices.DeleteFunc(all, func(info blob.Info) bool { return memory.IsBookkeeping(info.Key) })
	if err != nil || len(all) != 6 {
		t.Errorf("inner store holds %d objects besides the file count (%v), want only the 6 records", len(all), err)
	}
}

// TestRecreatedAfterDelete checks that a path deleted and created again
// keeps one history across both lives.
func TestRecreatedAfterDelete(t *testing.T) {
	hs := wrap(t, mem.New(nil), &history.Options{Now: newClock().Now})
	h := newHandler(t, hs)
	ctx := t.Context()
	must(t, h.Create(ctx, "/memories/a", "x"))
	must(t, h.Delete(ctx, "/memories/a"))
	must(t, h.Create(ctx, "/memories/a", "y"))
	checkRows(t, "history", historyRows(t, hs, "a"), []row{
		{Op: history.OpCreated, Path: "a", Size: 1, Content: "x"},
		{Op: history.OpDeleted, Path: "a"},
		{Op: history.OpCreated, Path: "a", Size: 1, Content: "y", Current: true},
	})
}

// TestRenameBackAndForth checks that a file renamed away and back lists
// each version once.
func TestRenameBackAndForth(t *testing.T) {
	hs := wrap(t, mem.New(nil), &history.Options{Now: newClock().Now})
	h := newHandler(t, hs)
	ctx := t.Context()
	must(t, h.Create(ctx, "/memories/a", "x"))
	must(t, h.Rename(ctx, "/memories/a", "/memories/b"))
	must(t, h.Rename(ctx, "/memories/b", "/memories/a"))
	checkRows(t, "history", historyRows(t, hs, "a"), []row{
		{Op: history.OpCreated, Path: "a", Size: 1, Content: "x"},
		{Op: history.OpRenamed, Path: "b", From: "a", Size: 1, Content: "x"},
		{Op: history.OpRenamed, Path: "a", From: "b", Size: 1, Content: "x", Current: true},
	})
}

// TestExistingStore: turning history on for a store that already holds a
// file starts from that moment; turning it off leaves the records
// readable, and later changes show as unrecorded.
func TestExistingStore(t *testing.T) {
	inner := mem.New(nil)
	if _, err := inner.Put(t.Context(), "old.md", []byte("before\n"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	hs := wrap(t, inner, &history.Options{Now: newClock().Now})
	checkRows(t, "before any change", historyRows(t, hs, "old.md"), []row{
		{Op: history.OpUnrecorded, Path: "old.md", Size: 7, Current: true},
	})
	must(t, newHandler(t, hs).StrReplace(t.Context(), "/memories/old.md", "before", "after"))
	first := row{Op: history.OpModified, Path: "old.md", Size: 6, Content: "after\n", Current: true}
	checkRows(t, "after the first change", historyRows(t, hs, "old.md"), []row{first})

	// History off: the handler over the bare store.
	must(t, newHandler(t, inner).StrReplace(t.Context(), "/memories/old.md", "after", "later"))
	first.Current = false
	checkRows(t, "after a change without history", historyRows(t, wrap(t, inner, nil), "old.md"), []row{
		first,
		{Op: history.OpUnrecorded, Path: "old.md", Size: 6, Current: true},
	})
}

// TestHiddenNamespace checks that the records are invisible through the
// Store and unreachable by key, and that other reserved keys pass through
// unrecorded.
func TestHiddenNamespace(t *testing.T) {
	inner := mem.New(nil)
	hs := wrap(t, inner, nil)
	ctx := t.Context()
	if _, err := hs.Put(ctx, "a", []byte("x"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := hs.Put(ctx, ".cloudmem/crypt-key", []byte("k"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"", ".cloudmem/", ".cloudmem/history/"} {
		infos, err := blob.ListAll(ctx, hs, prefix)
		var keys []string
		for _, i := range infos {
			keys = append(keys, i.Key)
		}
		want := map[string][]string{"": {".cloudmem/crypt-key", "a"}, ".cloudmem/": {".cloudmem/crypt-key"}}[prefix]
		if err != nil || !slices.Equal(keys, want) {
			t.Errorf("List(%q) = %q, %v; want %q", prefix, keys, err, want)
		}
	}
	recs := recordKeys(t, inner)
	if len(recs) != 1 {
		t.Fatalf("records %q, want one (the reserved key is not recorded)", recs)
	}
	if _, _, err := hs.Get(ctx, recs[0], 100); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Get of a record through the Store: %v, want ErrInvalidKey", err)
	}
	if _, err := hs.Put(ctx, recs[0], nil, blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Put of a record through the Store: %v, want ErrInvalidKey", err)
	}
	if err := hs.Delete(ctx, recs[0], blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Delete of a record through the Store: %v, want ErrInvalidKey", err)
	}
	if err := blob.DeleteTree(ctx, hs, ".cloudmem/history"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("DeleteTree of the records through the Store: %v, want ErrInvalidKey", err)
	}
}

// TestRace16 starts 16 writers on one file at once, each with its own
// Handler and its own Store over one shared inner store (as 16 processes
// would), and checks that the records match the acknowledged edits exactly
// and replay to the file's content.
func TestRace16(t *testing.T) {
	t.Run("mem", func(t *testing.T) { race16(t, mem.New(nil)) })
	t.Run("file", func(t *testing.T) { race16(t, newFile(t)) })
}

func race16(t *testing.T, inner blob.Store) {
	RaceOneFile(t, inner)
}

// RaceOneFile is the 16-writer race, shared with the integration tests'
// copy of it (integration/history_test.go has its own).
func RaceOneFile(t *testing.T, inner blob.Store) {
	const writers = 16
	ctx := t.Context()
	must(t, newHandler(t, wrap(t, inner, nil)).Create(ctx, "/memories/race.md", ""))
	start := make(chan struct{})
	results := make([]memory.Result, writers)
	var wg sync.WaitGroup
	for i := range writers {
		h := newHandler(t, wrap(t, inner, nil))
		wg.Go(func() {
			<-start
			results[i] = h.Insert(blob.WithActor(ctx, fmt.Sprintf("w%02d", i)), "/memories/race.md", 0, fmt.Sprintf("line %02d\n", i))
		})
	}
	close(start)
	wg.Wait()
	acked, refused := 0, 0
	for i, r := range results {
		switch {
		case !r.IsError:
			acked++
		case strings.Contains(r.Text, "was changed by another writer"):
			refused++
		default:
			t.Errorf("writer %d: %s", i, r.Text)
		}
	}
	data, _, err := inner.Get(ctx, "race.md", blob.MaxObjectBytes)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(data), "\n"); lines != acked {
		t.Errorf("file has %d lines, %d writers acknowledged", lines, acked)
	}
	hs := wrap(t, inner, nil)
	vs, err := hs.History(ctx, "race.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1+acked {
		t.Fatalf("%d versions, want 1 create + %d acknowledged inserts (%d refused)", len(vs), acked, refused)
	}
	if n := len(recordKeys(t, inner)); n != 1+acked {
		t.Errorf("%d record objects, want %d", n, 1+acked)
	}
	// Replay: each version adds one line to the one before, and the last
	// is the current content.
	var prev []byte
	actors := map[string]bool{}
	for i, v := range vs {
		got, _, err := hs.Show(ctx, "race.md", v.ID)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			if !bytes.HasSuffix(got, prev) || strings.Count(string(got), "\n") != i {
				t.Fatalf("version %d (%q) does not extend version %d (%q) by one line", i, got, i-1, prev)
			}
			actors[v.Actor] = true
		}
		prev = got
	}
	if !bytes.Equal(prev, data) || !vs[len(vs)-1].Current {
		t.Errorf("last version %q (current %v), file %q", prev, vs[len(vs)-1].Current, data)
	}
	if len(actors) != acked {
		t.Errorf("%d distinct actors among the versions, want %d", len(actors), acked)
	}
	t.Logf("%d writers: %d acknowledged, %d refused", writers, acked, refused)
}

// snapshot returns every object of inner, by key.
func snapshot(t testing.TB, inner blob.Store) map[string]string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), inner, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, i := range infos {
		data, info, err := inner.Get(t.Context(), i.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		out[i.Key] = info.Version + "\x00" + string(data)
	}
	return out
}

func sameSnapshot(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestBadInput checks that each bad request is a clear error and changes
// nothing.
func TestBadInput(t *testing.T) {
	inner := mem.New(nil)
	hs := wrap(t, inner, &history.Options{Now: newClock().Now})
	h := newHandler(t, hs)
	ctx := t.Context()
	must(t, h.Create(ctx, "/memories/f.md", "v1"))
	must(t, h.StrReplace(ctx, "/memories/f.md", "v1", "v2"))
	must(t, h.Create(ctx, "/memories/d/x.md", "x"))
	must(t, h.Delete(ctx, "/memories/d/x.md"))
	must(t, h.Create(ctx, "/memories/d/x.md/y", "y")) // d/x.md is now a directory
	vs, err := hs.History(ctx, "f.md")
	if err != nil {
		t.Fatal(err)
	}
	v1, v2 := vs[0].ID, vs[1].ID
	xs, err := hs.History(ctx, "d/x.md")
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, inner)

	cases := []struct {
		name string
		run  func() error
		want error
		text string
	}{
		{"unknown version", func() error { _, _, err := hs.Show(ctx, "f.md", "0123456789abcdef"); return err },
			history.ErrUnknownVersion, `history: no such version "0123456789abcdef" in the history of "f.md"`},
		{"malformed version", func() error { _, _, err := hs.Show(ctx, "f.md", "v1"); return err },
			history.ErrUnknownVersion, `history: no such version "v1": a version is 16 hexadecimal digits`},
		{"version of another file", func() error { _, err := hs.Restore(ctx, "d/x.md/y", v1, writer(t, hs)); return err },
			history.ErrUnknownVersion, fmt.Sprintf(`history: no such version %q in the history of "d/x.md/y"`, v1)},
		{"restore onto a directory", func() error { _, err := hs.Restore(ctx, "d/x.md", xs[0].ID, writer(t, hs)); return err },
			memory.ErrExists, `File /memories/d/x.md already exists`},
		{"restore a deletion", func() error { _, err := hs.Restore(ctx, "d/x.md", xs[1].ID, writer(t, hs)); return err },
			history.ErrNoContent, fmt.Sprintf(`history: the version has no content: version %s is a deletion; restore an earlier version`, xs[1].ID)},
		{"redact the current version", func() error { _, err := hs.Redact(ctx, "f.md", v2); return err },
			history.ErrCurrentVersion, fmt.Sprintf(`history: the version is the file's current content: version %s of "f.md" has the content the file holds now; change or delete the file first`, v2)},
		{"redact a deletion", func() error { _, err := hs.Redact(ctx, "d/x.md", xs[1].ID); return err },
			history.ErrNoContent, fmt.Sprintf(`history: the version has no content: version %s is a deletion`, xs[1].ID)},
		{"history of nothing", func() error { _, err := hs.History(ctx, "nope"); return err },
			blob.ErrNotExist, `history: "nope" has no versions: blob: object does not exist`},
	}
	for _, c := range cases {
		err := c.run()
		if !errors.Is(err, c.want) || err.Error() != c.text {
			t.Errorf("%s: %v\nwant %s (wrapping %v)", c.name, err, c.text, c.want)
		}
	}
	for _, ref := range []struct{ in, text string }{
		{"f.md", `history: malformed PATH@VERSION: "f.md" has no @VERSION`},
		{"@" + v1, fmt.Sprintf(`history: malformed PATH@VERSION: "@%s" has no path before the @`, v1)},
		{"f.md@", `history: malformed PATH@VERSION: "f.md@": a version is 16 hexadecimal digits, as history lists them`},
		{"f.md@XYZ", `history: malformed PATH@VERSION: "f.md@XYZ": a version is 16 hexadecimal digits, as history lists them`},
	} {
		if _, _, err := history.ParseRef(ref.in); !errors.Is(err, history.ErrBadRef) || err.Error() != ref.text {
			t.Errorf("ParseRef(%q): %v, want %s", ref.in, err, ref.text)
		}
	}
	if p, id, err := history.ParseRef("/memories/user@host.md@" + v1); p != "/memories/user@host.md" || id != v1 || err != nil {
		t.Errorf("ParseRef of a path with an @: %q, %q, %v", p, id, err)
	}
	if after := snapshot(t, inner); !sameSnapshot(before, after) {
		t.Errorf("a refused request changed the store")
	}
}

// TestRestore checks that a restore is a new, versioned write naming what
// it restored, and that it is conditional on the state it read.
func TestRestore(t *testing.T) {
	inner := mem.New(nil)
	hs := wrap(t, inner, &history.Options{Now: newClock().Now})
	h := newHandler(t, hs)
	ctx := blob.WithActor(t.Context(), "alice")
	must(t, h.Create(ctx, "/memories/f", "good\n"))
	must(t, h.StrReplace(ctx, "/memories/f", "good", "bad"))
	vs, _ := hs.History(ctx, "f")
	v, err := hs.Restore(ctx, "f", vs[0].ID, writer(t, hs))
	if err != nil {
		t.Fatal(err)
	}
	if v.Op != history.OpModified || v.RestoredFrom != vs[0].ID || v.Actor != "alice" || !v.Current {
		t.Errorf("restore's version %+v", v)
	}
	if got, err := newHandler(t, hs).ReadFile(ctx, "/memories/f"); string(got) != "good\n" || err != nil {
		t.Errorf("file after restore: %q, %v", got, err)
	}
	checkRows(t, "history", historyRows(t, hs, "f"), []row{
		{Op: history.OpCreated, Path: "f", Actor: "alice", Size: 5, Content: "good\n"},
		{Op: history.OpModified, Path: "f", Actor: "alice", Size: 4, Content: "bad\n"},
		{Op: history.OpModified, Path: "f", Actor: "alice", Size: 5, Content: "good\n", Current: true},
	})
	// Restoring a deleted file creates it again.
	must(t, h.Delete(ctx, "/memories/f"))
	if v, err := hs.Restore(ctx, "f", vs[1].ID, writer(t, hs)); err != nil || v.Op != history.OpCreated {
		t.Errorf("restore of a deleted file: %+v, %v", v, err)
	}
	// A writer that changes the file between Restore's read and its write
	// makes it fail, and nothing is restored.
	racing := &beforePut{Store: inner, hook: func() {
		if _, err := inner.Put(ctx, "f", []byte("rival"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}}
	rs := wrap(t, racing, nil)
	_, err = rs.Restore(ctx, "f", vs[0].ID, writer(t, rs))
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Errorf("restore racing a writer: %v, want ErrPrecondition", err)
	}
	if got, _, _ := inner.Get(ctx, "f", 100); string(got) != "rival" {
		t.Errorf("file %q, want the rival's write", got)
	}
}

// beforePut runs hook once, before the first Put of a non-reserved key.
type beforePut struct {
	blob.Store
	once sync.Once
	hook func()
}

func (b *beforePut) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if !blob.IsReserved(key) {
		b.once.Do(b.hook)
	}
	return b.Store.Put(ctx, key, data, c)
}

func sha(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// TestCapabilities checks what the Store forwards: read-only, the key
// budget, whether List hides keys under objects, locks and Close; and that
// it refuses a mount table.
func TestCapabilities(t *testing.T) {
	ctx := t.Context()
	if !blob.IsReadOnly(wrap(t, blob.ReadOnly(mem.New(nil)), nil)) || blob.IsReadOnly(wrap(t, mem.New(nil), nil)) {
		t.Error("ReadOnly is not the inner store's")
	}
	p, err := blob.Prefix(mem.New(nil), "tenant")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := blob.KeyBytes(wrap(t, p, nil)), blob.KeyBytes(p); got != want {
		t.Errorf("KeyBytes %d, want the inner store's %d", got, want)
	}
	if !blob.ListHidesUnderObjects(wrap(t, hider{mem.New(nil)}, nil)) || blob.ListHidesUnderObjects(wrap(t, mem.New(nil), nil)) {
		t.Error("ListHidesUnderObjects is not the inner store's")
	}
	f := newFile(t)
	hs := wrap(t, f, nil)
	if _, ok := f.(blob.Locker); ok {
		unlock, err := hs.Lock(ctx, "a")
		if err != nil {
			t.Errorf("Lock over the file store: %v", err)
		} else {
			unlock()
		}
	}
	if _, err := wrap(t, mem.New(nil), nil).Lock(ctx, "a"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Lock over a store without locks: %v, want ErrUnsupported", err)
	}
	if _, err := history.New(mountTable{mem.New(nil)}, nil); err == nil ||
		err.Error() != "history: the store is a mount table: turn history on in each mounted store instead" {
		t.Errorf("New over a mount table: %v", err)
	}
	c := &closeCount{Store: mem.New(nil)}
	if err := blob.Close(wrap(t, c, nil)); err != nil || c.n != 1 {
		t.Errorf("Close: %v, inner closed %d times", err, c.n)
	}
}

// hider is a store whose List says it hides keys under objects, as MinIO's.
type hider struct{ blob.Store }

func (hider) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen, HidesUnderObjects: true}
}

type closeCount struct {
	blob.Store
	n int
}

func (c *closeCount) Close() error { c.n++; return nil }

// TestOutOfOrderRecords makes a writer's record land after the record of
// the writer that came after it (and with a later time): History still
// lists the versions in the order the changes happened, so they replay.
func TestOutOfOrderRecords(t *testing.T) {
	ctx := t.Context()
	inner := mem.New(nil)
	v1, err := inner.Put(ctx, "f", []byte("0"), blob.Cond{})
	if err != nil {
		t.Fatal(err)
	}
	c := newClock()
	gate := make(chan struct{})
	var first atomic.Bool
	hs := wrap(t, inner, &history.Options{Now: func() time.Time {
		if first.CompareAndSwap(false, true) {
			<-gate // the first record waits until the second is written
		}
		return c.Now()
	}})
	done := make(chan error)
	go func() {
		_, err := hs.Put(ctx, "f", []byte("a"), blob.Cond{IfVersion: v1.Version})
		done <- err
	}()
	var v2 blob.Info
	for range 1000 { // until writer A's change has landed
		if v2, err = inner.Stat(ctx, "f"); err == nil && v2.Version != v1.Version {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if v2.Version == v1.Version {
		t.Fatal("writer A's change never landed")
	}
	if _, err := hs.Put(ctx, "f", []byte("b"), blob.Cond{IfVersion: v2.Version}); err != nil {
		t.Fatal(err)
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	vs, err := hs.History(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || !vs[1].Time.Before(vs[0].Time) {
		t.Fatalf("versions %+v: want A's record later in time than B's", vs)
	}
	checkRows(t, "history", rows(t, hs, "f", vs), []row{
		{Op: history.OpModified, Path: "f", Size: 1, Content: "a"},
		{Op: history.OpModified, Path: "f", Size: 1, Content: "b", Current: true},
	})
}

// mountTable is a store that says it is a mount table.
type mountTable struct{ blob.Store }

func (mountTable) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen, Mounts: []blob.MountPoint{{Name: "team"}}}
}

// TestRestoreKeepsTheFileLimit is the repro of a restore past the file
// limit: a file deleted to make room, then the room taken by another, then
// the deleted file restored. The restore writes through the handler, so it
// is refused as full, exactly as a create would be, and the store keeps
// its limit.
func TestRestoreKeepsTheFileLimit(t *testing.T) {
	inner := mem.New(nil)
	hs := wrap(t, inner, nil)
	h, err := memory.New(hs, memory.Options{MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, p := range []string{"/memories/a.md", "/memories/b.md", "/memories/c.md"} {
		must(t, h.Create(ctx, p, "x\n"))
	}
	vs, err := hs.History(ctx, "c.md")
	if err != nil {
		t.Fatal(err)
	}
	must(t, h.Delete(ctx, "/memories/c.md"))
	must(t, h.Create(ctx, "/memories/d.md", "y\n"))

	write := func(ctx context.Context, key string, data []byte, ifVersion string) error {
		_, err := h.Write(ctx, memory.PathOf(key), data, ifVersion)
		return err
	}
	_, err = hs.Restore(ctx, "c.md", vs[0].ID, write)
	const want = "The memory directory is full: it holds 3 files, the limit is 3. Delete or merge files first."
	if !errors.Is(err, memory.ErrFull) || err.Error() != want {
		t.Errorf("restore past the limit: %v, want %q (memory.ErrFull)", err, want)
	}
	files, err := h.Files(ctx, "/memories")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
	}
	if want := []string{"/memories/a.md", "/memories/b.md", "/memories/d.md"}; !slices.Equal(got, want) {
		t.Errorf("files after the refused restore: %q, want %q", got, want)
	}
	// With room again, the same restore lands, as a create.
	must(t, h.Delete(ctx, "/memories/d.md"))
	v, err := hs.Restore(ctx, "c.md", vs[0].ID, write)
	if err != nil || v.Op != history.OpCreated || v.RestoredFrom != vs[0].ID {
		t.Errorf("restore with room: %+v, %v", v, err)
	}
}

// TestLegacyQuotedVersions reads records written when the S3 store spelled
// a version's ETag in quotes ("etag"#id): they still equal the store's
// versions, which no longer have quotes, so the current version is found
// and the records keep their order. The records here are a mem store's,
// rewritten to the quoted form.
func TestLegacyQuotedVersions(t *testing.T) {
	ctx := t.Context()
	inner := mem.New(nil)
	hs := wrap(t, inner, &history.Options{Now: newClock().Now})
	h := newHandler(t, hs)
	must(t, h.Create(ctx, "/memories/a.md", "one\n"))
	must(t, h.StrReplace(ctx, "/memories/a.md", "one", "two"))
	quote := func(field, v string) string { return fmt.Sprintf(`"%s":"%s"`, field, v) }
	for _, key := range recordKeys(t, inner) {
		data, _, err := inner.Get(ctx, key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		var hdr struct{ Prev, Ver string }
		line, _, _ := bytes.Cut(data, []byte("\n"))
		if err := json.Unmarshal(line, &hdr); err != nil {
			t.Fatal(err)
		}
		s := string(data)
		for field, v := range map[string]string{"prev": hdr.Prev, "ver": hdr.Ver} {
			if v != "" {
				s = strings.Replace(s, quote(field, v), quote(field, `\"`+v+`\"`), 1)
			}
		}
		if s == string(data) {
			t.Fatalf("record %s: nothing to quote in %s", key, line)
		}
		if _, err := inner.Put(ctx, key, []byte(s), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	checkRows(t, "history over quoted records", historyRows(t, hs, "a.md"), []row{
		{Op: history.OpCreated, Path: "a.md", Size: 4, Content: "one\n"},
		{Op: history.OpModified, Path: "a.md", Size: 4, Content: "two\n", Current: true},
	})
}
