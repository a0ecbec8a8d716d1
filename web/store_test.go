package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/web"
)

// With Options.Store above History (cloudmem puts the write policy there),
// the console reads and restores through Store: a file that expired is
// gone from the tree, and restoring it is recorded in History as a change
// of the version that expired, with no unrecorded deletion before it.
func TestStoreAboveHistory(t *testing.T) {
	if _, err := web.New(web.Options{Store: mem.New(nil), Logger: quiet}); err == nil ||
		err.Error() != "web: Options.Store goes with Options.History" {
		t.Fatalf("Store without History: %v", err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clk := func() time.Time { return now }
	hs, err := history.New(mem.New(&mem.Options{Now: clk}), &history.Options{Now: clk, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	top := blob.WithExpiry(hs, blob.Expiry{Now: clk, After: func(key string) (time.Duration, bool) {
		return time.Hour, strings.HasPrefix(key, "scratch/")
	}})
	h, err := memory.New(top, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := memory.WithActor(context.Background(), "agent")
	for _, r := range []memory.Result{h.Create(ctx, "/memories/scratch/a.md", "one\n"), h.StrReplace(ctx, "/memories/scratch/a.md", "one", "two")} {
		if r.IsError {
			t.Fatal(r.Text)
		}
	}
	srv, err := web.New(web.Options{History: hs, Store: top, Actor: "lead@laptop", Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, hs: hs, h: h, srv: srv}
	want(t, f.get("/tree?path=/memories/scratch"), http.StatusOK, `<a href="/file?path=%2fmemories%2fscratch%2fa.md">a.md</a>`)
	ids := f.ids("scratch/a.md")
	now = now.Add(2 * time.Hour)
	want(t, f.get("/tree"), http.StatusOK, `<p class="empty">This directory holds no file.</p>`)

	page := f.get("/restore?path=/memories/scratch/a.md&version=" + ids[0])
	want(t, page, http.StatusOK)
	form := map[string][]string{"path": {"/memories/scratch/a.md"}, "version": {ids[0]}, "csrf": {csrfOf(t, page.Body.String())}}
	want(t, f.post("/restore", form, []string{"Sec-Fetch-Site: same-origin"}), http.StatusOK,
		`<p class="done" role="status">Restored /memories/scratch/a.md to version `+ids[0]+`: its new version is `+f.ids("scratch/a.md")[2]+`.</p>`)
	vs, err := hs.History(ctx, "scratch/a.md")
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, v := range vs {
		ops = append(ops, string(v.Op)+" "+v.RestoredFrom)
	}
	if got, want := strings.Join(ops, ", "), "created , modified , modified "+ids[0]; got != want {
		t.Fatalf("history after the restore: %s, want %s", got, want)
	}
}
