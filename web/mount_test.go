package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/web"
)

// mounted is one mount of a mount fixture: its history (nil for a mount
// that keeps none) and a handler that writes in it as an agent would.
type mounted struct {
	hs *history.Store
	h  *memory.Handler
}

// newMountFixture returns a console over a mount table: team (with
// history), ro (with history, read-only) and docs (no history), the clock
// shared so that events interleave in a known order.
func newMountFixture(t *testing.T, opts web.Options) (*fixture, map[string]*mounted) {
	t.Helper()
	now := (&clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}).Now
	ms := map[string]*mounted{}
	for _, name := range []string{"team", "ro", "docs"} {
		var s blob.Store = mem.New(nil)
		m := &mounted{}
		if name != "docs" {
			hs, err := history.New(s, &history.Options{Now: now, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			m.hs, s = hs, hs
		}
		h, err := memory.New(s, memory.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		m.h = h
		ms[name] = m
		opts.Mounts = append(opts.Mounts, web.Mount{Name: name, History: m.hs, Store: s, ReadOnly: name == "ro"})
	}
	opts.Logger, opts.Actor = quiet, "lead@laptop"
	srv, err := web.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, srv: srv}, ms
}

// write runs a command in a mount as actor.
func (m *mounted) write(t *testing.T, actor string, run func(ctx context.Context, h *memory.Handler) memory.Result) {
	t.Helper()
	if res := run(memory.WithActor(context.Background(), actor), m.h); res.Err != nil {
		t.Fatal(res.Text)
	}
}

func (m *mounted) ids(t *testing.T, key string) []string {
	t.Helper()
	vs, err := m.hs.History(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}

// TestMounts serves a mount table: each mount's files, its history and
// actions (none for a read-only mount), the audit log of every mount with
// history, and what a mount without history cannot show.
func TestMounts(t *testing.T) {
	f, ms := newMountFixture(t, web.Options{})
	team, ro, docs := ms["team"], ms["ro"], ms["docs"]
	team.write(t, "agent-1", func(ctx context.Context, h *memory.Handler) memory.Result { // 09:01
		return h.Create(ctx, "/memories/a.md", "one\n")
	})
	ro.write(t, "agent-2", func(ctx context.Context, h *memory.Handler) memory.Result { // 09:02
		return h.Create(ctx, "/memories/r.md", "read me\n")
	})
	team.write(t, "agent-3", func(ctx context.Context, h *memory.Handler) memory.Result { // 09:03
		return h.StrReplace(ctx, "/memories/a.md", "one", "two")
	})
	docs.write(t, "agent-4", func(ctx context.Context, h *memory.Handler) memory.Result {
		return h.Create(ctx, "/memories/d.md", "doc\n")
	})
	a, r := team.ids(t, "a.md"), ro.ids(t, "r.md")

	w := f.get("/tree")
	want(t, w, http.StatusOK, `<h1>/memories</h1>`)
	for _, dir := range []string{"docs", "ro", "team"} {
		want(t, w, http.StatusOK, `<tr class="dir"><td><a href="/tree?path=%2fmemories%2f`+dir+`">`+dir+`/</a></td>`)
	}
	want(t, f.get("/tree?path=/memories/team"), http.StatusOK,
		`<tr class="file"><td><a href="/file?path=%2fmemories%2fteam%2fa.md">a.md</a></td><td>4 bytes</td>`,
		`<td>agent-3</td></tr>`)
	want(t, f.get("/tree?path=/memories/docs"), http.StatusOK,
		`<tr class="file"><td><a href="/file?path=%2fmemories%2fdocs%2fd.md">d.md</a></td><td>4 bytes</td>`)
	want(t, f.get("/file?path=/memories/docs/d.md"), http.StatusOK, `<tr><td class="n">1</td><td><pre>doc</pre></td></tr>`)

	// team: its versions, with the actions.
	p := "%2fmemories%2fteam%2fa.md"
	want(t, f.get("/history?path=/memories/team/a.md"), http.StatusOK, fmt.Sprintf(`<tr>
<td><input type="radio" name="from" value="%[2]s" checked aria-label="compare from %[2]s"></td>
<td><input type="radio" name="to" value="%[2]s" aria-label="compare to %[2]s"></td>
<td><a href="/file?path=%[1]s&amp;version=%[2]s">%[2]s</a></td>
<td>2026-12-01 09:01:00 UTC</td>
<td>agent-1</td>
<td>created</td>
<td>4 bytes</td>
<td><a href="/restore?path=%[1]s&amp;version=%[2]s">Restore</a> <a href="/redact?path=%[1]s&amp;version=%[2]s">Redact</a></td>
</tr>`, p, a[0]))
	want(t, f.get("/diff?path=/memories/team/a.md&from="+a[0]+"&to="+a[1]), http.StatusOK,
		`<span class="head">--- /memories/team/a.md@`+a[0]+`</span>`)
	// ro: its versions, and no action.
	w = f.get("/history?path=/memories/ro/r.md")
	want(t, w, http.StatusOK, fmt.Sprintf(`<td><a href="/file?path=%%2fmemories%%2fro%%2fr.md&amp;version=%[1]s">%[1]s</a> (current)</td>`, r[0]))
	refuse(t, w, "/restore?", "/redact?")
	// docs: no history to show.
	noHistory := `<p class="error" role="alert">No history is kept where /memories/docs/d.md is stored, so it has no versions to show, restore or redact.</p>`
	want(t, f.get("/history?path=/memories/docs/d.md"), http.StatusNotFound, noHistory)
	want(t, f.get("/file?path=/memories/docs/d.md&version=0123456789abcdef"), http.StatusNotFound, noHistory)
	want(t, f.get("/restore?path=/memories/docs/d.md&version=0123456789abcdef"), http.StatusNotFound, noHistory)
	want(t, f.get("/history?path=/memories/elsewhere/x.md"), http.StatusNotFound, `<p class="error" role="alert">There is no file /memories/elsewhere/x.md.</p>`)

	// The audit log merges the mounts with history, in time order, and
	// names the one without.
	row := func(when, actor, op, path, id, size string) string {
		return fmt.Sprintf(`<tr><td>2026-12-01 %s UTC</td><td>%s</td><td>%s</td><td><a href="/history?path=%s">%s</a></td><td>%s</td><td>%s</td></tr>`,
			when, actor, op, strings.ReplaceAll(url.QueryEscape(path), "%2F", "%2f"), path, id, size)
	}
	want(t, f.get("/audit"), http.StatusOK, `<p class="note">No history is kept in /memories/docs, so changes there are not in this log.</p>`,
		"<tbody>\n"+row("09:03:00", "agent-3", "modified", "/memories/team/a.md", a[1], "4 bytes")+"\n"+
			row("09:02:00", "agent-2", "created", "/memories/ro/r.md", r[0], "8 bytes")+"\n"+
			row("09:01:00", "agent-1", "created", "/memories/team/a.md", a[0], "4 bytes")+"\n</tbody>")
	want(t, f.get("/audit?path=/memories/ro"), http.StatusOK,
		"<tbody>\n"+row("09:02:00", "agent-2", "created", "/memories/ro/r.md", r[0], "8 bytes")+"\n</tbody>")

	// A restore in team is recorded in team's history, as the person.
	csrf := csrfOf(t, f.get("/restore?path=/memories/team/a.md&version="+a[0]).Body.String())
	want(t, f.post("/restore", url.Values{"path": {"/memories/team/a.md"}, "version": {a[0]}, "csrf": {csrf}}, nil), http.StatusOK,
		`Restored /memories/team/a.md to version `+a[0]+`: its new version is `)
	vs, _ := team.hs.History(context.Background(), "a.md")
	if v := vs[len(vs)-1]; len(vs) != 3 || v.Actor != "lead@laptop" || v.RestoredFrom != a[0] || !v.Current {
		t.Errorf("the restore in team: %+v", vs)
	}
	if data, err := team.h.ReadFile(context.Background(), "/memories/a.md"); err != nil || string(data) != "one\n" {
		t.Errorf("team's a.md after the restore: %q, %v", data, err)
	}
	// Redact in team; nothing in ro or docs.
	want(t, f.post("/redact", url.Values{"path": {"/memories/team/a.md"}, "version": {a[1]}, "csrf": {csrf}}, nil), http.StatusOK,
		`Redacted 1 version of /memories/team/a.md: `+a[1]+`.`)
	want(t, f.post("/restore", url.Values{"path": {"/memories/ro/r.md"}, "version": {r[0]}, "csrf": {csrf}}, nil), http.StatusForbidden,
		`<p class="error" role="alert">You can read this store but not change it, so nothing was changed.</p>`)
	want(t, f.post("/redact", url.Values{"path": {"/memories/docs/d.md"}, "version": {"0123456789abcdef"}, "csrf": {csrf}}, nil), http.StatusNotFound, noHistory)
	if got := ro.ids(t, "r.md"); len(got) != 1 {
		t.Errorf("a refused restore in ro wrote: %v", got)
	}
}

// TestMountsTenant: a tenant over a mount table sees its mount only, and
// the audit log names a mount without history it sees.
func TestMountsTenant(t *testing.T) {
	ts := tokensOf(t, `{"tenants": [
		{"name": "teamer", "token": "teamer-token-0123456789", "prefix": "team"},
		{"name": "reader", "token": "reader-token-0123456789", "mounts": [{"name": "k", "prefix": "docs"}, {"name": "r", "prefix": "ro"}]}
	]}`)
	f, ms := newMountFixture(t, web.Options{Tokens: ts})
	ms["team"].write(t, "agent", func(ctx context.Context, h *memory.Handler) memory.Result {
		return h.Create(ctx, "/memories/a.md", "one\n")
	})
	ms["ro"].write(t, "agent", func(ctx context.Context, h *memory.Handler) memory.Result {
		return h.Create(ctx, "/memories/r.md", "r\n")
	})
	teamer := f.login("teamer-token-0123456789")
	want(t, f.get("/tree", teamer), http.StatusOK, `<tr class="file"><td><a href="/file?path=%2fmemories%2fa.md">a.md</a></td><td>4 bytes</td>`)
	w := f.get("/audit", teamer)
	want(t, w, http.StatusOK, `<td>created</td><td><a href="/history?path=%2fmemories%2fa.md">/memories/a.md</a></td>`)
	refuse(t, w, "r.md", "No history is kept")
	reader := f.login("reader-token-0123456789")
	w = f.get("/audit", reader)
	want(t, w, http.StatusOK, `<p class="note">No history is kept in /memories/k, so changes there are not in this log.</p>`,
		`<td>created</td><td><a href="/history?path=%2fmemories%2fr%2fr.md">/memories/r/r.md</a></td>`)
	refuse(t, w, "a.md")
	refuse(t, f.get("/history?path=/memories/r/r.md", reader), "/restore?", "/redact?")
}

func tokensOf(t *testing.T, file string) *mcpserver.Tokens {
	t.Helper()
	ts, err := mcpserver.ParseTokens([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestMountOptions(t *testing.T) {
	hs, err := history.New(mem.New(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		opts web.Options
		want string
	}{
		{web.Options{}, "web: Options.History or Options.Mounts is required"},
		{web.Options{History: hs, Mounts: []web.Mount{{Name: "a", History: hs}}}, "web: Options takes History or Mounts, not both"},
		{web.Options{Mounts: []web.Mount{{Name: "a"}}}, `web: mount "a" has neither History nor Store`},
	} {
		if _, err := web.New(c.opts); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %s", c.opts, err, c.want)
		}
	}
	if _, err := web.New(web.Options{Mounts: []web.Mount{{Name: "a/b", History: hs}}}); err == nil {
		t.Error("a bad mount name was taken")
	}
}

// TestTreeCalls counts the storage calls of the tree page: the authors
// cost one List of the file's own records and one Get per file shown, the
// first time, and nothing while the file keeps its version, however many
// records the rest of the store holds (the audit trail is not read).
func TestTreeCalls(t *testing.T) {
	counter := blob.NewCounter(mem.New(nil))
	hs, err := history.New(counter, &history.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(hs, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := memory.WithActor(context.Background(), "agent")
	for i := range 40 { // 120 records elsewhere
		p := fmt.Sprintf("/memories/other/f%d.md", i)
		for _, res := range []memory.Result{h.Create(ctx, p, "a\n"), h.StrReplace(ctx, p, "a", "b"), h.StrReplace(ctx, p, "b", "c")} {
			if res.Err != nil {
				t.Fatal(res.Text)
			}
		}
	}
	for _, p := range []string{"/memories/notes/x.md", "/memories/notes/y.md"} {
		if res := h.Create(memory.WithActor(context.Background(), "writer"), p, "x\n"); res.Err != nil {
			t.Fatal(res.Text)
		}
	}
	srv, err := web.New(web.Options{History: hs, Logger: quiet, Actor: "lead"})
	if err != nil {
		t.Fatal(err)
	}
	// The calls of the directory listing alone, which every view makes.
	view, err := memory.New(hs, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	counter.Reset()
	if _, err := view.Files(context.Background(), "/memories/notes"); err != nil {
		t.Fatal(err)
	}
	listing := counter.Counts()

	tree := func() blob.Counts {
		t.Helper()
		counter.Reset()
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/tree?path=/memories/notes", nil))
		want(t, w, http.StatusOK, `<td>writer</td></tr>
<tr class="file"><td><a href="/file?path=%2fmemories%2fnotes%2fy.md">y.md</a></td><td>2 bytes</td>`)
		return counter.Counts()
	}
	plus := func(c blob.Counts, list, get int64) blob.Counts {
		c.List += list
		c.Get += get
		return c
	}
	if got, want := tree(), plus(listing, 2, 2); got != want {
		t.Errorf("the first view: %+v, want %+v", got, want)
	}
	if got := tree(); got != listing {
		t.Errorf("the second view: %+v, want %+v (the listing alone)", got, listing)
	}
	if res := h.StrReplace(memory.WithActor(context.Background(), "writer"), "/memories/notes/x.md", "x", "z"); res.Err != nil {
		t.Fatal(res.Text)
	}
	if got, want := tree(), plus(listing, 1, 1); got != want {
		t.Errorf("after x.md changed: %+v, want %+v", got, want)
	}
}

// TestConcurrentTreeViews: views of the tree, released at once while files
// change, each answer 200 with an author for every file (the author cache
// is shared), and after the changes the authors are the last writers'.
func TestConcurrentTreeViews(t *testing.T) {
	f := newFixture(t, web.Options{})
	for i := range 4 {
		f.create("first", fmt.Sprintf("/memories/f%d.md", i), "0\n")
	}
	const viewers = 16
	start := make(chan struct{})
	var wg sync.WaitGroup
	var ok, failed atomic.Int32
	for range viewers {
		wg.Go(func() {
			<-start
			w := httptest.NewRecorder()
			f.srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/tree", nil))
			if w.Code == http.StatusOK && strings.Count(w.Body.String(), `<tr class="file">`) == 4 && !strings.Contains(w.Body.String(), "<td></td></tr>") {
				ok.Add(1)
			} else {
				failed.Add(1)
			}
		})
	}
	var written atomic.Int32
	for i := range 4 {
		wg.Go(func() {
			<-start
			ctx := memory.WithActor(context.Background(), "second")
			if res := f.h.StrReplace(ctx, fmt.Sprintf("/memories/f%d.md", i), "0", "1"); res.Err == nil {
				written.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != viewers || failed.Load() != 0 || written.Load() != 4 {
		t.Errorf("%d views answered with every author, %d did not, of %d; %d of 4 writes landed", ok.Load(), failed.Load(), viewers, written.Load())
	}
	if got := strings.Count(f.get("/tree").Body.String(), "<td>second</td></tr>"); got != 4 {
		t.Errorf("after the changes %d files show their last writer, want 4", got)
	}
}
