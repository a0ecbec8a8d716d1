package history_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
)

// TestPruneKeep keeps the last 2 versions of each path, never the current
// state, and never a path's last record (its deletion).
func TestPruneKeep(t *testing.T) {
	inner := mem.New(nil)
	c := newClock()
	hs := wrap(t, inner, &history.Options{Keep: 2, Now: c.Now})
	h := newHandler(t, hs)
	ctx := t.Context()
	must(t, h.Create(ctx, "/memories/a", "0"))
	for i := 1; i <= 4; i++ {
		must(t, h.StrReplace(ctx, "/memories/a", fmt.Sprint(i-1), fmt.Sprint(i)))
	}
	must(t, h.Create(ctx, "/memories/gone", "g"))
	must(t, h.Delete(ctx, "/memories/gone"))
	res, err := hs.Prune(ctx)
	if err != nil || res != (history.PruneResult{Removed: 3, Kept: 4}) {
		t.Fatalf("Prune: %+v, %v; want 3 removed, 4 kept", res, err)
	}
	checkRows(t, "a", historyRows(t, hs, "a"), []row{
		{Op: history.OpModified, Path: "a", Size: 1, Content: "3"},
		{Op: history.OpModified, Path: "a", Size: 1, Content: "4", Current: true},
	})
	checkRows(t, "gone", historyRows(t, hs, "gone"), []row{
		{Op: history.OpCreated, Path: "gone", Size: 1, Content: "g"},
		{Op: history.OpDeleted, Path: "gone", Current: true},
	})
	// A second run has nothing left to do.
	if res, err := hs.Prune(ctx); err != nil || res.Removed != 0 {
		t.Errorf("second Prune: %+v, %v", res, err)
	}
}

// TestPruneMaxAge removes the versions older than MaxAge, except the
// current one; with Keep too, a version goes only when both allow it.
func TestPruneMaxAge(t *testing.T) {
	for _, tc := range []struct {
		keep    int
		removed int
	}{{0, 2}, {2, 1}} {
		inner := mem.New(nil)
		c := newClock()
		opts := &history.Options{MaxAge: time.Hour, Keep: tc.keep, Now: c.Now}
		h := newHandler(t, wrap(t, inner, opts))
		ctx := t.Context()
		must(t, h.Create(ctx, "/memories/a", "0"))
		must(t, h.StrReplace(ctx, "/memories/a", "0", "1"))
		must(t, h.StrReplace(ctx, "/memories/a", "1", "2"))
		c.t = c.t.Add(2 * time.Hour) // every version is now old
		hs := wrap(t, inner, opts)
		res, err := hs.Prune(ctx)
		if err != nil || res.Removed != tc.removed {
			t.Errorf("Keep %d: Prune %+v, %v; want %d removed", tc.keep, res, err, tc.removed)
		}
		vs, err := hs.History(ctx, "a")
		if err != nil || len(vs) != 3-tc.removed || !vs[len(vs)-1].Current {
			t.Errorf("Keep %d: history after prune %+v, %v", tc.keep, vs, err)
		}
	}
}

// TestPruneNothing: with no retention set, Prune removes nothing.
func TestPruneNothing(t *testing.T) {
	hs := wrap(t, mem.New(nil), nil)
	must(t, newHandler(t, hs).Create(t.Context(), "/memories/a", "x"))
	if res, err := hs.Prune(t.Context()); err != nil || res != (history.PruneResult{Kept: 1}) {
		t.Errorf("Prune: %+v, %v", res, err)
	}
}

// TestNewOptions refuses negative retention.
func TestNewOptions(t *testing.T) {
	for _, o := range []history.Options{{Keep: -1}, {MaxAge: -time.Second}} {
		if _, err := history.New(mem.New(nil), &o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// TestAudit lists every change of the store in time order, filtered by
// time and actor.
func TestAudit(t *testing.T) {
	c := newClock()
	hs := wrap(t, mem.New(nil), &history.Options{Actor: "cli", Now: c.Now})
	h := newHandler(t, hs)
	ctx := t.Context()
	alice := blob.WithActor(ctx, "alice")
	must(t, h.Create(alice, "/memories/a", "1"))           // 09:00:01
	must(t, h.Create(ctx, "/memories/b", "22"))            // 09:00:02
	must(t, h.Rename(alice, "/memories/a", "/memories/c")) // 09:00:03
	must(t, h.Delete(ctx, "/memories/b"))                  // 09:00:04
	type ev struct {
		Sec         int
		Actor       string
		Op          history.Op
		Path, From  string
		Size        int64
		HasSHA, Has bool
	}
	project := func(es []history.Event) []ev {
		var out []ev
		for _, e := range es {
			out = append(out, ev{e.Time.Second(), e.Actor, e.Op, e.Path, e.From, e.Size, e.SHA256 != "", e.Version != ""})
		}
		return out
	}
	all, err := hs.Audit(ctx, history.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := []ev{
		{1, "alice", history.OpCreated, "a", "", 1, true, true},
		{2, "cli", history.OpCreated, "b", "", 2, true, true},
		{3, "alice", history.OpRenamed, "c", "a", 1, true, true},
		{4, "cli", history.OpDeleted, "b", "", 0, false, true},
	}
	if got := project(all); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit:\n got %v\nwant %v", got, want)
	}
	since := time.Date(2026, 12, 1, 9, 0, 2, 0, time.UTC)
	got, err := hs.Audit(ctx, history.AuditFilter{Since: since, Actor: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(project(got)) != fmt.Sprint([]ev{want[1], want[3]}) {
		t.Errorf("audit since %v by cli: %v", since, project(got))
	}
}

// TestCalls counts the storage calls each command makes through the
// wrapper against the same command without it: one Put more per change (a
// Stat more for a file delete, which the handler sends unconditionally),
// none more per read; a rename makes the calls of blob.Rename's key-by-key
// fallback plus one Put. These are the numbers of the call table in docs/history.md.
func TestCalls(t *testing.T) {
	ctx := t.Context()
	inner := blob.NewCounter(mem.New(nil))
	h := newHandler(t, wrap(t, inner, nil))
	plainInner := blob.NewCounter(noRename{mem.New(nil)})
	p := newHandler(t, plainInner)
	step := func(name string, extra blob.Counts, run func(hh *handlerT) bool) {
		t.Helper()
		inner.Reset()
		plainInner.Reset()
		if !run(h) || !run(p) {
			t.Fatalf("%s failed", name)
		}
		want := plainInner.Counts()
		want.Get += extra.Get
		want.Stat += extra.Stat
		want.Put += extra.Put
		want.Delete += extra.Delete
		want.List += extra.List
		if got := inner.Counts(); got != want {
			t.Errorf("%s through history: %+v, want %+v (without history: %+v)", name, got, want, plainInner.Counts())
		}
	}
	onePut := blob.Counts{Put: 1}
	step("create", onePut, func(h *handlerT) bool { return !h.Create(ctx, "/memories/a.md", "x\n").IsError })
	step("view", blob.Counts{}, func(h *handlerT) bool { return !h.View(ctx, "/memories/a.md", nil).IsError })
	step("view of the directory", blob.Counts{}, func(h *handlerT) bool { return !h.View(ctx, "/memories", nil).IsError })
	step("str_replace", onePut, func(h *handlerT) bool { return !h.StrReplace(ctx, "/memories/a.md", "x", "y").IsError })
	step("insert", onePut, func(h *handlerT) bool { return !h.Insert(ctx, "/memories/a.md", 0, "z\n").IsError })
	step("rename (key by key)", onePut, func(h *handlerT) bool {
		return !h.Rename(ctx, "/memories/a.md", "/memories/b.md").IsError
	})
	step("delete", blob.Counts{Stat: 1, Put: 1}, func(h *handlerT) bool { return !h.Delete(ctx, "/memories/b.md").IsError })
	for _, hh := range []*handlerT{h, p} {
		must(t, hh.Create(ctx, "/memories/d/1", "1"))
		must(t, hh.Create(ctx, "/memories/d/2", "2"))
	}
	// The handler's first Delete (is it a file?) becomes a Stat; then one
	// Put per file deleted.
	step("delete of a 2-file directory", blob.Counts{Stat: 1, Delete: -1, Put: 2}, func(h *handlerT) bool {
		return !h.Delete(ctx, "/memories/d").IsError
	})
}

// noRename hides the atomic capabilities of a store.
type noRename struct{ blob.Store }
