package web_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/web"
)

// clock is a fake clock that advances one minute per reading.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Minute)
	return c.t
}

// fixture is a store with history, and a console over it.
type fixture struct {
	t     *testing.T
	inner blob.Store
	hs    *history.Store
	h     *memory.Handler // writes as the agents do
	srv   *web.Server
}

var quiet = slog.New(slog.DiscardHandler)

func newFixture(t *testing.T, opts web.Options) *fixture {
	t.Helper()
	inner := mem.New(nil)
	hs, err := history.New(inner, &history.Options{Now: (&clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}).Now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(hs, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	opts.History, opts.Logger = hs, quiet
	if opts.Actor == "" {
		opts.Actor = "lead@laptop"
	}
	srv, err := web.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, inner: inner, hs: hs, h: h, srv: srv}
}

// do runs a command as actor and fails the test on error.
func (f *fixture) do(actor string, run func(ctx context.Context, h *memory.Handler) memory.Result) {
	f.t.Helper()
	if res := run(memory.WithActor(context.Background(), actor), f.h); res.Err != nil {
		f.t.Fatal(res.Text)
	}
}

func (f *fixture) create(actor, path, text string) {
	f.t.Helper()
	f.do(actor, func(ctx context.Context, h *memory.Handler) memory.Result { return h.Create(ctx, path, text) })
}

func (f *fixture) replace(actor, path, old, new string) {
	f.t.Helper()
	f.do(actor, func(ctx context.Context, h *memory.Handler) memory.Result { return h.StrReplace(ctx, path, old, new) })
}

// ids returns the version ids of key, oldest first.
func (f *fixture) ids(key string) []string {
	f.t.Helper()
	vs, err := f.hs.History(context.Background(), key)
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for _, v := range vs {
		out = append(out, v.ID)
	}
	return out
}

// get requests target with GET (and the given cookies) and returns the
// response.
func (f *fixture) get(target string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	return w
}

// post sends a form, with the given headers ("Name: value") and cookies.
func (f *fixture) post(target string, form url.Values, headers []string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		r.Header.Set(k, v)
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	return w
}

// csrfOf returns the CSRF token a page's forms carry.
func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	return m[1]
}

// want checks the status and that the body holds every fragment, whole.
func want(t *testing.T, w *httptest.ResponseRecorder, status int, fragments ...string) {
	t.Helper()
	body := w.Body.String()
	if w.Code != status {
		t.Errorf("status %d, want %d; body:\n%s", w.Code, status, body)
	}
	for _, frag := range fragments {
		if !strings.Contains(body, frag) {
			t.Errorf("the page lacks\n%s\n--- page:\n%s", frag, body)
		}
	}
}

// refuse checks that the body holds none of the fragments.
func refuse(t *testing.T, w *httptest.ResponseRecorder, fragments ...string) {
	t.Helper()
	for _, frag := range fragments {
		if strings.Contains(w.Body.String(), frag) {
			t.Errorf("the page holds %q:\n%s", frag, w.Body.String())
		}
	}
}

func TestTree(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent-1", "/memories/notes/a.md", "alpha\n")
	f.create("agent-2", "/memories/notes/deep/b.md", "beta beta\n")
	f.create("agent-2", "/memories/top.txt", "top\n")
	f.replace("agent-3", "/memories/top.txt", "top", "top!")
	infos, err := f.h.Files(context.Background(), "/memories")
	if err != nil {
		t.Fatal(err)
	}
	mod := map[string]string{}
	for _, i := range infos {
		mod[i.Key] = i.Modified.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	latest := max(mod["notes/a.md"], mod["notes/deep/b.md"])
	want(t, f.get("/tree"), http.StatusOK,
		`<p class="crumbs"><a href="/tree?path=%2fmemories">memories</a></p>
<h1>/memories</h1>`,
		`<tbody>
<tr class="dir"><td><a href="/tree?path=%2fmemories%2fnotes">notes/</a></td><td>16 bytes in 2 files</td><td>`+latest+`</td><td></td></tr>
<tr class="file"><td><a href="/file?path=%2fmemories%2ftop.txt">top.txt</a></td><td>5 bytes</td><td>`+mod["top.txt"]+`</td><td>agent-3</td></tr>
</tbody>`)
	want(t, f.get("/tree?path=/memories/notes"), http.StatusOK,
		`<p class="crumbs"><a href="/tree?path=%2fmemories">memories</a> / <a href="/tree?path=%2fmemories%2fnotes">notes</a></p>`,
		`<tr class="dir"><td><a href="/tree?path=%2fmemories%2fnotes%2fdeep">deep/</a></td><td>10 bytes in 1 file</td><td>`+mod["notes/deep/b.md"]+`</td><td></td></tr>
<tr class="file"><td><a href="/file?path=%2fmemories%2fnotes%2fa.md">a.md</a></td><td>6 bytes</td><td>`+mod["notes/a.md"]+`</td><td>agent-1</td></tr>
</tbody>`)
	want(t, f.get("/tree?path=/memories/nothing"), http.StatusNotFound,
		`<p class="error" role="alert">The path /memories/nothing does not exist</p>`)
	want(t, f.get("/tree?path=/etc"), http.StatusBadRequest,
		`<p class="error" role="alert">Path must start with /memories, got: /etc</p>`)
	want(t, f.get("/"), http.StatusSeeOther)
	want(t, f.get("/nothing"), http.StatusNotFound, `<p class="error" role="alert">There is no such page.</p>`)
}

func TestEmptyTree(t *testing.T) {
	f := newFixture(t, web.Options{})
	want(t, f.get("/tree"), http.StatusOK, `<p class="empty">This directory holds no file.</p>`)
}

// png is the smallest PNG header memory.ImageType accepts.
const pngHeader = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

func TestFile(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent", "/memories/a.md", "# Title\nline <two>\n")
	want(t, f.get("/file?path=/memories/a.md"), http.StatusOK,
		`<p class="meta">The current content, 19 bytes · <a href="/history?path=%2fmemories%2fa.md">History</a> · <a href="/file?path=%2fmemories%2fa.md&amp;view=md">Show as Markdown</a></p>
<table class="lines">
<tbody>
<tr><td class="n">1</td><td><pre># Title</pre></td></tr>
<tr><td class="n">2</td><td><pre>line &lt;two&gt;</pre></td></tr>
</tbody>
</table>`)
	want(t, f.get("/file?path=/memories/a.md&view=md"), http.StatusOK, `<div class="markdown">
<p class="h1">Title</p>
<p>line &lt;two&gt;</p>
</div>`)
	if _, err := f.h.Write(context.Background(), "/memories/pic.png", []byte(pngHeader), ""); err != nil {
		t.Fatal(err)
	}
	want(t, f.get("/file?path=/memories/pic.png"), http.StatusOK,
		`<p class="image"><img src="/raw?path=%2fmemories%2fpic.png" alt="/memories/pic.png"></p>`)
	raw := f.get("/raw?path=/memories/pic.png")
	if raw.Code != http.StatusOK || raw.Body.String() != pngHeader || raw.Header().Get("Content-Type") != "image/png" ||
		raw.Header().Get("Content-Security-Policy") != "default-src 'none'; sandbox" {
		t.Errorf("raw image: %d %q %v", raw.Code, raw.Body.String(), raw.Header())
	}
	pic := f.ids("pic.png")
	want(t, f.get("/file?path=/memories/pic.png&version="+pic[0]), http.StatusOK,
		`<p class="image"><img src="/raw?path=%2fmemories%2fpic.png&amp;version=`+pic[0]+`" alt="/memories/pic.png"></p>`)
	if raw := f.get("/raw?path=/memories/pic.png&version=" + pic[0]); raw.Code != http.StatusOK || raw.Body.String() != pngHeader {
		t.Errorf("raw image version: %d %q", raw.Code, raw.Body.String())
	}
	// An SVG, or HTML named .png, is never served raw.
	f.create("agent", "/memories/x.svg", `<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`)
	f.create("agent", "/memories/fake.png", "<html><script>alert(1)</script></html>")
	for _, p := range []string{"/memories/x.svg", "/memories/fake.png", "/memories/a.md"} {
		want(t, f.get("/raw?path="+p), http.StatusUnsupportedMediaType, `<p class="error" role="alert">This file is not an image.</p>`)
	}
	if _, err := f.h.Write(context.Background(), "/memories/blob.bin", []byte{0xff, 0xfe, 0}, ""); err != nil {
		t.Fatal(err)
	}
	want(t, f.get("/file?path=/memories/blob.bin"), http.StatusOK,
		`<p class="empty">This file is 3 bytes of binary content, which is not shown.</p>`)
	f.create("agent", "/memories/empty.md", "")
	want(t, f.get("/file?path=/memories/empty.md"), http.StatusOK, `<p class="empty">This file is empty.</p>`)
	want(t, f.get("/file?path=/memories"), http.StatusBadRequest)
	want(t, f.get("/file?path=/memories/none.md"), http.StatusNotFound,
		`<p class="error" role="alert">The path /memories/none.md does not exist</p>`)
}

func TestFileVersion(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent-1", "/memories/a.md", "one\n")
	f.replace("agent-2", "/memories/a.md", "one", "two")
	ids := f.ids("a.md")
	want(t, f.get("/file?path=/memories/a.md&version="+ids[0]), http.StatusOK,
		`<p class="meta">Version `+ids[0]+`, created 2026-12-01 09:01:00 UTC by agent-1 as /memories/a.md · <a href="/file?path=%2fmemories%2fa.md">the current content</a>, 4 bytes`,
		`<tr><td class="n">1</td><td><pre>one</pre></td></tr>`)
	want(t, f.get("/file?path=/memories/a.md&version=0123456789abcdef"), http.StatusNotFound,
		`<p class="error" role="alert">/memories/a.md has no version 0123456789abcdef.</p>`)
	want(t, f.get("/file?path=/memories/a.md&version=nonsense"), http.StatusNotFound,
		`<p class="error" role="alert">/memories/a.md has no version nonsense.</p>`)
}

func TestHistoryAndDiff(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent-1", "/memories/a.md", "one\ntwo\n")
	f.replace("agent-2", "/memories/a.md", "two", "three")
	ids := f.ids("a.md")
	p := "%2fmemories%2fa.md"
	want(t, f.get("/history?path=/memories/a.md"), http.StatusOK, fmt.Sprintf(`<tbody>
<tr class="current">
<td><input type="radio" name="from" value="%[2]s" aria-label="compare from %[2]s"></td>
<td><input type="radio" name="to" value="%[2]s" checked aria-label="compare to %[2]s"></td>
<td><a href="/file?path=%[1]s&amp;version=%[2]s">%[2]s</a> (current)</td>
<td>2026-12-01 09:02:00 UTC</td>
<td>agent-2</td>
<td>modified</td>
<td>10 bytes</td>
<td></td>
</tr>
<tr>
<td><input type="radio" name="from" value="%[3]s" checked aria-label="compare from %[3]s"></td>
<td><input type="radio" name="to" value="%[3]s" aria-label="compare to %[3]s"></td>
<td><a href="/file?path=%[1]s&amp;version=%[3]s">%[3]s</a></td>
<td>2026-12-01 09:01:00 UTC</td>
<td>agent-1</td>
<td>created</td>
<td>8 bytes</td>
<td><a href="/restore?path=%[1]s&amp;version=%[3]s">Restore</a> <a href="/redact?path=%[1]s&amp;version=%[3]s">Redact</a></td>
</tr>
</tbody>`, p, ids[1], ids[0]))
	want(t, f.get("/diff?path=/memories/a.md&from="+ids[0]+"&to="+ids[1]), http.StatusOK,
		`<p class="meta">From version `+ids[0]+` to version `+ids[1]+` · <a href="/history?path=%2fmemories%2fa.md">History</a></p>
<pre class="diff"><span class="head">--- /memories/a.md@`+ids[0]+`</span><span class="head">&#43;&#43;&#43; /memories/a.md@`+ids[1]+`</span><span class="hunk">@@ -1,2 &#43;1,2 @@</span><span class="same"> one</span><span class="del">-two</span><span class="add">&#43;three</span></pre>`)
	want(t, f.get("/diff?path=/memories/a.md&from="+ids[1]), http.StatusOK,
		`<p class="empty">The two have the same content.</p>`)
	want(t, f.get("/diff?path=/memories/a.md"), http.StatusNotFound)
	want(t, f.get("/history?path=/memories"), http.StatusNotFound, `<p class="error" role="alert">There is no file /memories.</p>`)
	want(t, f.get("/history?path=/memories/none.md"), http.StatusNotFound,
		`<p class="error" role="alert">/memories/none.md has no recorded versions and no file.</p>`)
}

func TestAudit(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent-1", "/memories/a.md", "one\n")               // 09:01
	f.create("agent-2", "/memories/notes/b.md", "two\n")         // 09:02
	f.replace("agent-1", "/memories/notes/b.md", "two", "three") // 09:03
	a, b := f.ids("a.md"), f.ids("notes/b.md")
	row := func(when, actor, op, p, id, size string) string {
		return fmt.Sprintf(`<tr><td>2026-12-01 %s UTC</td><td>%s</td><td>%s</td><td><a href="/history?path=%s">%s</a></td><td>%s</td><td>%s</td></tr>`,
			when, actor, op, url.QueryEscape(p), p, id, size)
	}
	r3 := row("09:03:00", "agent-1", "modified", "/memories/notes/b.md", b[1], "6 bytes")
	r2 := row("09:02:00", "agent-2", "created", "/memories/notes/b.md", b[0], "4 bytes")
	r1 := row("09:01:00", "agent-1", "created", "/memories/a.md", a[0], "4 bytes")
	r3, r2, r1 = strings.ReplaceAll(r3, "%2F", "%2f"), strings.ReplaceAll(r2, "%2F", "%2f"), strings.ReplaceAll(r1, "%2F", "%2f")
	for _, c := range []struct{ query, rows string }{
		{"", r3 + "\n" + r2 + "\n" + r1 + "\n"},
		{"?actor=agent-1", r3 + "\n" + r1 + "\n"},
		{"?path=/memories/notes", r3 + "\n" + r2 + "\n"},
		{"?path=/memories/notes/b.md&actor=agent-2", r2 + "\n"},
		{"?since=2026-12-01T09:02&until=2026-12-01T09:02", r2 + "\n"},
		{"?until=2026-11-30", ""},
	} {
		w := f.get("/audit" + c.query)
		if c.rows == "" {
			want(t, w, http.StatusOK, `<p class="empty">No recorded change matches.</p>`)
			continue
		}
		want(t, w, http.StatusOK, "<tbody>\n"+c.rows+"</tbody>")
	}
	want(t, f.get("/audit?since=yesterday"), http.StatusBadRequest,
		`<p class="error" role="alert">&#34;yesterday&#34; is not a time for &#34;since&#34;: give a date such as 2026-12-01, or a date and time such as 2026-12-01T09:30.</p>`,
		`<label>Since <input name="since" value="yesterday" placeholder="2026-12-01"></label>`)
	want(t, f.get("/audit?path=/etc"), http.StatusBadRequest,
		`<p class="error" role="alert">Path must start with /memories, got: /etc</p>`)
}

func TestSearch(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent", "/memories/deploy.md", "how to rotate the deploy key\n")
	f.create("agent", "/memories/other.md", "nothing here\n")
	want(t, f.get("/search?q=deploy+key"), http.StatusOK,
		`<p class="meta">1 file matches.</p>
<ol class="hits">
<li><a href="/file?path=%2fmemories%2fdeploy.md">/memories/deploy.md</a> <span class="line">line 1</span><br><span class="snippet">how to rotate the <mark>deploy</mark> <mark>key</mark></span></li>
</ol>`)
	want(t, f.get("/search?q=absent"), http.StatusOK, `<p class="empty">No file matches.</p>`)
	want(t, f.get("/search?q=%2A%2A"), http.StatusBadRequest, `<p class="error" role="alert">The query has no words to search for.</p>`)
	want(t, f.get("/search"), http.StatusOK, `<label>Words <input name="q" value="" placeholder="deploy key"></label>`)
}

func TestRestore(t *testing.T) {
	f := newFixture(t, web.Options{Actor: "lead@laptop"})
	f.create("agent-1", "/memories/a.md", "good\n")
	f.replace("agent-2", "/memories/a.md", "good", "bad")
	ids := f.ids("a.md")
	w := f.get("/restore?path=/memories/a.md&version=" + ids[0])
	want(t, w, http.StatusOK,
		`<h1>Restore /memories/a.md to version `+ids[0]+`?</h1>
<p class="confirm">This writes the content of version `+ids[0]+` (5 bytes, written 2026-12-01 09:01:00 UTC by agent-1) back to /memories/a.md, as a new version recorded with you, lead@laptop, as its author. Nothing is deleted: the content the file holds now stays in its history. If the file changes before you confirm, nothing is written.</p>`,
		`<pre class="diff"><span class="head">--- /memories/a.md</span><span class="head">&#43;&#43;&#43; /memories/a.md@`+ids[0]+`</span><span class="hunk">@@ -1 &#43;1 @@</span><span class="del">-bad</span><span class="add">&#43;good</span></pre>`)
	csrf := csrfOf(t, w.Body.String())
	form := url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}}
	// Without the CSRF token, or with another, nothing changes.
	want(t, f.post("/restore", form, nil), http.StatusForbidden,
		`<p class="error" role="alert">This form is out of date or did not come from this console, so nothing was changed. Go back, reload the page and try again.</p>`)
	form.Set("csrf", "forged")
	want(t, f.post("/restore", form, nil), http.StatusForbidden)
	// A cross-site POST with the right token changes nothing either.
	form.Set("csrf", csrf)
	want(t, f.post("/restore", form, []string{"Sec-Fetch-Site: cross-site"}), http.StatusForbidden)
	want(t, f.post("/restore", form, []string{"Origin: https://evil.example"}), http.StatusForbidden)
	if got := f.ids("a.md"); len(got) != 2 {
		t.Fatalf("a refused restore wrote: %v", got)
	}
	w = f.post("/restore", form, []string{"Sec-Fetch-Site: same-origin"})
	ids = f.ids("a.md")
	want(t, w, http.StatusOK, `<p class="done" role="status">Restored /memories/a.md to version `+ids[0]+`: its new version is `+ids[2]+`.</p>`)
	data, err := f.h.ReadFile(context.Background(), "/memories/a.md")
	if err != nil || string(data) != "good\n" {
		t.Fatalf("after the restore: %q, %v", data, err)
	}
	vs, _ := f.hs.History(context.Background(), "a.md")
	if v := vs[2]; v.Actor != "lead@laptop" || v.RestoredFrom != ids[0] {
		t.Errorf("the restore's version: %+v", v)
	}
	want(t, f.get("/restore?path=/memories/a.md&version="+ids[0]), http.StatusOK,
		`<p class="empty">The file holds this content now: the restore writes it again, as a new version.</p>`)
	// A version that is no longer there, or a deletion, is refused.
	form.Set("version", "0123456789abcdef")
	want(t, f.post("/restore", form, nil), http.StatusNotFound,
		`<p class="error" role="alert">/memories/a.md has no version 0123456789abcdef.</p>`)
	f.do("agent", func(ctx context.Context, h *memory.Handler) memory.Result { return h.Delete(ctx, "/memories/a.md") })
	del := f.ids("a.md")[3]
	want(t, f.get("/restore?path=/memories/a.md&version="+del), http.StatusConflict,
		`<p class="error" role="alert">Version `+del+` has no content: it is a deletion, or its content was redacted.</p>`)
	// A deleted file is restored (created again).
	want(t, f.post("/restore", url.Values{"path": {"/memories/a.md"}, "version": {ids[1]}, "csrf": {csrf}}, nil), http.StatusOK)
	if data, _ := f.h.ReadFile(context.Background(), "/memories/a.md"); string(data) != "bad\n" {
		t.Errorf("after restoring a deleted file: %q", data)
	}
}

// interloper changes the file once, as another agent would, when the
// console's write starts: after the restore read the file's state.
type interloper struct {
	once sync.Once
	do   func()
}

func (i *interloper) CommandStart(ctx context.Context, c memory.CommandInfo) context.Context {
	if c.Name == "write" {
		i.once.Do(i.do)
	}
	return ctx
}
func (i *interloper) CommandConflict(context.Context, bool)     {}
func (i *interloper) CommandEnd(context.Context, memory.Result) {}

// TestRestoreConflict: a file that changes while a restore is under way is
// not restored, and the person is told so.
func TestRestoreConflict(t *testing.T) {
	var f *fixture
	obs := &interloper{do: func() { f.replace("agent", "/memories/a.md", "two", "three") }}
	f = newFixture(t, web.Options{Memory: memory.Options{Observer: obs}})
	f.create("agent", "/memories/a.md", "one\n")
	f.replace("agent", "/memories/a.md", "one", "two")
	ids := f.ids("a.md")
	csrf := csrfOf(t, f.get("/restore?path=/memories/a.md&version="+ids[0]).Body.String())
	want(t, f.post("/restore", url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}, "csrf": {csrf}}, nil), http.StatusConflict,
		`<p class="error" role="alert">/memories/a.md changed while you were looking at it, so nothing was changed. Look at its history again and repeat what you did.</p>`)
	if data, _ := f.h.ReadFile(context.Background(), "/memories/a.md"); string(data) != "three\n" {
		t.Errorf("after a conflicting restore: %q", data)
	}
	if got := f.ids("a.md"); len(got) != 3 {
		t.Errorf("versions after a conflicting restore: %v", got)
	}
}

func TestRedact(t *testing.T) {
	f := newFixture(t, web.Options{Actor: "dpo@office"})
	f.create("agent-1", "/memories/a.md", "secret=hunter2\n")
	f.replace("agent-2", "/memories/a.md", "secret=hunter2", "secret=<removed>")
	ids := f.ids("a.md")
	want(t, f.get("/redact?path=/memories/a.md&version="+ids[1]), http.StatusOK,
		`<p class="confirm">Version `+ids[1]+` holds the content the file has now, so it cannot be redacted. Change or delete the file first.</p>
<p><a href="/history?path=%2fmemories%2fa.md">Back to the history</a></p>`)
	w := f.get("/redact?path=/memories/a.md&version=" + ids[0])
	want(t, w, http.StatusOK,
		`<h1>Redact version `+ids[0]+` of /memories/a.md?</h1>
<p class="confirm">This erases, for good, the content of 1 version of /memories/a.md: `+ids[0]+`. Every version of the file with the same content is erased with it. The records stay, with their time, author and operation, marked as redacted by you, dpo@office; their size and SHA-256 are erased too. This cannot be undone.</p>`)
	csrf := csrfOf(t, w.Body.String())
	form := url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}}
	want(t, f.post("/redact", form, nil), http.StatusForbidden)
	if _, _, err := f.hs.Show(context.Background(), "a.md", ids[0]); err != nil {
		t.Fatalf("a refused redaction erased: %v", err)
	}
	form.Set("csrf", csrf)
	want(t, f.post("/redact", form, nil), http.StatusOK,
		`<p class="done" role="status">Redacted 1 version of /memories/a.md: `+ids[0]+`.</p>`)
	if _, _, err := f.hs.Show(context.Background(), "a.md", ids[0]); !errors.Is(err, history.ErrNoContent) {
		t.Fatalf("after the redaction, Show: %v", err)
	}
	want(t, f.get("/audit?actor=dpo@office"), http.StatusOK, `<td>dpo@office</td><td>redacted</td>`)
	want(t, f.get("/history?path=/memories/a.md"), http.StatusOK, `<td>created, redacted 2026-12-01 09:03:00 UTC by dpo@office</td>`)
	// The current content is refused by the POST too.
	form.Set("version", ids[1])
	want(t, f.post("/redact", form, nil), http.StatusConflict,
		`<p class="error" role="alert">Version `+ids[1]+` holds the content the file has now, so it cannot be redacted. Change or delete the file first.</p>`)
}

func TestReadOnly(t *testing.T) {
	f := newFixture(t, web.Options{ReadOnly: true})
	f.create("agent", "/memories/a.md", "one\n")
	f.replace("agent", "/memories/a.md", "one", "two")
	ids := f.ids("a.md")
	w := f.get("/history?path=/memories/a.md")
	want(t, w, http.StatusOK, `<span class="who">lead@laptop · read-only</span>`)
	refuse(t, w, "/restore?", "/redact?")
	want(t, f.get("/restore?path=/memories/a.md&version="+ids[0]), http.StatusForbidden,
		`<p class="error" role="alert">You can read this store but not change it, so nothing was changed.</p>`)
	for _, action := range []string{"/restore", "/redact"} {
		want(t, f.post(action, url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}}, nil), http.StatusForbidden)
	}
	if got := f.ids("a.md"); len(got) != 2 {
		t.Fatalf("a read-only console wrote: %v", got)
	}
	// A store that is read-only itself makes the console read-only.
	hs, err := history.New(blob.ReadOnly(f.inner), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(web.Options{History: hs, Logger: quiet, Actor: "x"})
	if err != nil {
		t.Fatal(err)
	}
	rw := httptest.NewRecorder()
	srv.ServeHTTP(rw, httptest.NewRequest(http.MethodGet, "/history?path=/memories/a.md", nil))
	want(t, rw, http.StatusOK, `<span class="who">x · read-only</span>`)
	refuse(t, rw, "/restore?", "/redact?")
}

func TestHeaders(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent", "/memories/a.md", "one\n")
	for _, p := range []string{"/tree", "/file?path=/memories/a.md", "/history?path=/memories/a.md", "/audit", "/search?q=one", "/nothing", "/static/style.css"} {
		w := f.get(p)
		h := w.Header()
		if h.Get("Content-Security-Policy") != web.ContentSecurityPolicy || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: headers %v", p, h)
		}
	}
	if css := f.get("/static/style.css"); css.Code != http.StatusOK || !strings.HasPrefix(css.Header().Get("Content-Type"), "text/css") {
		t.Errorf("style sheet: %d %v", css.Code, css.Header())
	}
}

// TestHostile: a name and content written to attack the reader come out
// as text, and no link the page makes comes from the content.
func TestHostile(t *testing.T) {
	f := newFixture(t, web.Options{})
	name := `/memories/<img src=x onerror=alert(1)>.md`
	content := "<script>alert(1)</script>\n[click](javascript:alert(1))\n<a href=\"javascript:alert(2)\">x</a>\n<!-- <img src=x onerror=alert(3)> -->\n"
	f.create("<b>agent</b>", name, content)
	f.replace("agent", name, "click", "tap")
	ids := f.ids(strings.TrimPrefix(name, "/memories/"))
	for _, p := range []string{
		"/tree", "/file?path=" + url.QueryEscape(name), "/file?view=md&path=" + url.QueryEscape(name),
		"/history?path=" + url.QueryEscape(name), "/audit", "/search?q=alert",
		"/diff?path=" + url.QueryEscape(name) + "&from=" + ids[0],
		"/restore?version=" + ids[0] + "&path=" + url.QueryEscape(name),
		"/redact?version=" + ids[0] + "&path=" + url.QueryEscape(name),
	} {
		w := f.get(p)
		if w.Code != http.StatusOK {
			t.Errorf("%s: %d", p, w.Code)
		}
		refuse(t, w, "<img src=x", "<script>", "<b>agent", `href="javascript`, "<a href=\"javascript", "<!--")
		for _, m := range regexp.MustCompile(`(?:href|src|action)="([^"]*)"`).FindAllStringSubmatch(w.Body.String(), -1) {
			if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
				t.Errorf("%s: a link to %q", p, m[1])
			}
		}
	}
	want(t, f.get("/file?view=md&path="+url.QueryEscape(name)), http.StatusOK, `<div class="markdown">
<p>&lt;script&gt;alert(1)&lt;/script&gt;
[tap](javascript:alert(1))
&lt;a href=&#34;javascript:alert(2)&#34;&gt;x&lt;/a&gt;
&lt;!-- &lt;img src=x onerror=alert(3)&gt; --&gt;</p>
</div>`)
	want(t, f.get("/tree"), http.StatusOK,
		`<tr class="file"><td><a href="/file?path=%2fmemories%2f%3cimg%20src%3dx%20onerror%3dalert%281%29%3e.md">&lt;img src=x onerror=alert(1)&gt;.md</a></td>`)
}

func TestMarkdownBlocks(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent", "/memories/m.md", "## Steps\n\n1. one\n2. two\n\n```\n<b>code</b>\n```\n> quoted\n\n---\ntext\nmore\n")
	want(t, f.get("/file?view=md&path=/memories/m.md"), http.StatusOK, `<div class="markdown">
<p class="h2">Steps</p>
<ul><li>one</li><li>two</li></ul>
<pre>&lt;b&gt;code&lt;/b&gt;</pre>
<blockquote>quoted</blockquote>
<hr>
<p>text
more</p>
</div>`)
}

// tokenFile gives three tenants: alice (prefix alice), bob (read-only, the
// whole store) and carol (mounts).
const tokenFile = `{"tenants": [
 {"name": "alice", "token": "alice-token-0123456789", "prefix": "alice"},
 {"name": "bob", "token": "bob-token-0123456789ab", "readonly": true},
 {"name": "carol", "token": "carol-token-0123456789", "mounts": [{"name": "team", "prefix": "alice"}, {"name": "ro", "prefix": "shared", "readonly": true}]}
]}`

func tokens(t *testing.T) *mcpserver.Tokens {
	t.Helper()
	ts, err := mcpserver.ParseTokens([]byte(tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// login logs in with token and returns the cookie.
func (f *fixture) login(token string) *http.Cookie {
	f.t.Helper()
	w := f.post("/login", url.Values{"token": {token}}, nil)
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/tree" {
		f.t.Fatalf("login: %d %v", w.Code, w.Header())
	}
	cs := w.Result().Cookies()
	if len(cs) != 1 {
		f.t.Fatalf("login cookies: %v", cs)
	}
	return cs[0]
}

func TestLogin(t *testing.T) {
	f := newFixture(t, web.Options{Tokens: tokens(t)})
	f.create("agent", "/memories/alice/a.md", "alice's\n")
	f.create("agent", "/memories/top.md", "top\n")
	// No cookie: pages go to the login, actions are refused.
	if w := f.get("/tree"); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/login" {
		t.Errorf("no login: %d %v", w.Code, w.Header())
	}
	want(t, f.post("/restore", url.Values{"path": {"/memories/top.md"}}, nil), http.StatusForbidden,
		`<p class="error" role="alert">You are not logged in, or your login has ended. Log in again and repeat what you did.</p>`)
	want(t, f.get("/login"), http.StatusOK, `<form class="login" method="post" action="/login">
<label for="token">Your token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Log in</button>
</form>`)
	want(t, f.post("/login", url.Values{"token": {"wrong-token-0123456789"}}, nil), http.StatusUnauthorized,
		`<p class="error" role="alert">That token is not valid. Paste the whole token you were given.</p>`)
	want(t, f.get("/tree", &http.Cookie{Name: web.CookieName, Value: "bm9wZQ"}), http.StatusSeeOther)
	// A body over the bound is not read: the form has no token.
	want(t, f.post("/login", url.Values{"token": {"alice-token-0123456789"}, "pad": {strings.Repeat("x", 20<<10)}}, nil), http.StatusUnauthorized)

	c := f.login("alice-token-0123456789")
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure || c.Path != "/" {
		t.Errorf("cookie %+v", c)
	}
	// Over TLS the cookie is Secure.
	r := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader("token=alice-token-0123456789"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.TLS = &tls.ConnectionState{}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	if cs := w.Result().Cookies(); len(cs) != 1 || !cs[0].Secure || !cs[0].HttpOnly || cs[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie over TLS: %+v", cs)
	}
	// alice sees her prefix only.
	w = f.get("/tree", c)
	want(t, w, http.StatusOK, `<span class="who">alice</span>
<form class="logout" method="post" action="/logout">`,
		`<tr class="file"><td><a href="/file?path=%2fmemories%2fa.md">a.md</a></td><td>8 bytes</td>`)
	refuse(t, w, "top.md")
	want(t, f.get("/audit", c), http.StatusOK, `<td>created</td><td><a href="/history?path=%2fmemories%2fa.md">/memories/a.md</a></td>`)
	refuse(t, f.get("/audit", c), "top.md")
	// Logging out needs the CSRF token, and clears the cookie.
	want(t, f.post("/logout", nil, nil, c), http.StatusForbidden)
	w = f.post("/logout", url.Values{"csrf": {csrfOf(t, f.get("/tree", c).Body.String())}}, nil, c)
	if cs := w.Result().Cookies(); w.Code != http.StatusSeeOther || len(cs) != 1 || cs[0].MaxAge >= 0 {
		t.Errorf("logout: %d %+v", w.Code, cs)
	}
}

func TestTenants(t *testing.T) {
	f := newFixture(t, web.Options{Tokens: tokens(t)})
	f.create("agent", "/memories/alice/a.md", "one\n")
	f.replace("agent", "/memories/alice/a.md", "one", "two")
	f.create("agent", "/memories/shared/s.md", "s1\n")
	f.replace("agent", "/memories/shared/s.md", "s1", "s2")
	ids, sids := f.ids("alice/a.md"), f.ids("shared/s.md")

	alice := f.login("alice-token-0123456789")
	w := f.get("/history?path=/memories/a.md", alice)
	want(t, w, http.StatusOK, `<a href="/restore?path=%2fmemories%2fa.md&amp;version=`+ids[0]+`">Restore</a>`)
	// alice restores; the history records her as the author.
	csrf := csrfOf(t, w.Body.String())
	want(t, f.post("/restore", url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}, "csrf": {csrf}}, nil, alice), http.StatusOK)
	vs, _ := f.hs.History(context.Background(), "alice/a.md")
	if v := vs[len(vs)-1]; v.Actor != "alice" || v.RestoredFrom != ids[0] {
		t.Errorf("alice's restore: %+v", v)
	}
	// Another session's CSRF token is not alice's.
	bob := f.login("bob-token-0123456789ab")
	bobCSRF := csrfOf(t, f.get("/tree", bob).Body.String())
	want(t, f.post("/restore", url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}, "csrf": {bobCSRF}}, nil, alice), http.StatusForbidden)
	// bob is read-only: no actions, and his requests are refused.
	w = f.get("/history?path=/memories/alice/a.md", bob)
	want(t, w, http.StatusOK, `<span class="who">bob · read-only</span>`)
	refuse(t, w, "/restore?", "/redact?")
	want(t, f.post("/redact", url.Values{"path": {"/memories/alice/a.md"}, "version": {ids[0]}, "csrf": {bobCSRF}}, nil, bob), http.StatusForbidden)
	// carol sees alice's files under team/, shared/ read-only under ro/.
	carol := f.login("carol-token-0123456789")
	want(t, f.get("/tree", carol), http.StatusOK,
		`<tr class="dir"><td><a href="/tree?path=%2fmemories%2fro">ro/</a></td>`,
		`<tr class="dir"><td><a href="/tree?path=%2fmemories%2fteam">team/</a></td>`)
	want(t, f.get("/history?path=/memories/team/a.md", carol), http.StatusOK, `<a href="/redact?path=%2fmemories%2fteam%2fa.md&amp;version=`+ids[0]+`">Redact</a>`)
	carolCSRF := csrfOf(t, f.get("/tree", carol).Body.String())
	want(t, f.post("/restore", url.Values{"path": {"/memories/ro/s.md"}, "version": {sids[0]}, "csrf": {carolCSRF}}, nil, carol), http.StatusForbidden,
		`<p class="error" role="alert">You can read this store but not change it, so nothing was changed.</p>`)
	want(t, f.get("/history?path=/memories/nowhere/x.md", carol), http.StatusNotFound)
	if got := f.ids("shared/s.md"); len(got) != 2 {
		t.Errorf("a refused restore wrote: %v", got)
	}
}

func TestCheckAddr(t *testing.T) {
	f := newFixture(t, web.Options{})
	if err := f.srv.CheckAddr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}); err != nil {
		t.Error(err)
	}
	if err := f.srv.CheckAddr(&net.TCPAddr{IP: net.IPv4zero, Port: 80}); !errors.Is(err, web.ErrNoAuth) {
		t.Errorf("0.0.0.0 without tokens: %v", err)
	}
	withTokens := newFixture(t, web.Options{Tokens: tokens(t)})
	if err := withTokens.srv.CheckAddr(&net.TCPAddr{IP: net.IPv4zero, Port: 80}); err != nil {
		t.Error(err)
	}
}

// TestServe serves on a real listener and shuts down when the context ends.
func TestServe(t *testing.T) {
	f := newFixture(t, web.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln, nil) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/tree")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "<h1>/memories</h1>") {
		t.Errorf("served %d:\n%s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	wide, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip(err)
	}
	if err := f.srv.Serve(context.Background(), wide, nil); !errors.Is(err, web.ErrNoAuth) {
		t.Errorf("serving 0.0.0.0 without tokens: %v", err)
	}
}
