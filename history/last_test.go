package history_test

import (
	"context"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// TestLastChange: the latest change of a path, a rename to it or its
// deletion, whatever else the store records, for one List and one Get.
func TestLastChange(t *testing.T) {
	counter := blob.NewCounter(mem.New(nil))
	hs, err := history.New(counter, &history.Options{Now: newClock().Now})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, hs)
	as := func(actor string) context.Context { return memory.WithActor(context.Background(), actor) }
	must(t, h.Create(as("a"), "/memories/x.md", "1\n"))
	must(t, h.StrReplace(as("b"), "/memories/x.md", "1", "2"))
	must(t, h.Create(as("c"), "/memories/other.md", "o\n"))
	must(t, h.Rename(as("d"), "/memories/x.md", "/memories/y.md"))
	must(t, h.Create(as("e"), "/memories/z.md", "z\n"))
	must(t, h.Delete(as("f"), "/memories/z.md"))
	for _, c := range []struct {
		key, actor string
		op         history.Op
		ok         bool
	}{
		{"y.md", "d", history.OpRenamed, true},
		{"other.md", "c", history.OpCreated, true},
		{"z.md", "f", history.OpDeleted, true},
		{"none.md", "", "", false},
	} {
		counter.Reset()
		v, ok, err := hs.LastChange(context.Background(), c.key)
		if err != nil || ok != c.ok || v.Actor != c.actor || v.Op != c.op || ok && v.Path != c.key {
			t.Errorf("%s: %+v %v %v, want %s by %s", c.key, v, ok, err, c.op, c.actor)
		}
		want := blob.Counts{List: 1, Get: 1}
		if !c.ok {
			want.Get = 0
		}
		if got := counter.Counts(); got != want {
			t.Errorf("%s: calls %+v, want %+v", c.key, got, want)
		}
	}
	if _, _, err := hs.LastChange(context.Background(), history.Namespace+"x"); err == nil {
		t.Error("a key of the records was taken")
	}
}
