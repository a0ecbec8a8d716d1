package web_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/web"
)

// The environment of the browser test.
const (
	chromiumEnv    = "CLOUDMEM_CHROMIUM"        // the browser's binary; else chromium on PATH
	screenshotsEnv = "CLOUDMEM_WEB_SCREENSHOTS" // a directory to write the pages' screenshots to
)

// chromium returns the browser binary. A missing browser skips the test,
// and fails it when CI or CLOUDMEM_INTEGRATION is set (integration/chromium.sh
// installs it).
func chromium(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(chromiumEnv); bin != "" {
		return bin
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	msg := "no Chromium: run integration/chromium.sh, or set " + chromiumEnv
	if os.Getenv("CI") != "" || os.Getenv("CLOUDMEM_INTEGRATION") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browserLog records what the pages ran: dialogs, console calls,
// exceptions and log entries. The console has no script, so any of them
// on its pages means content ran.
type browserLog struct {
	mu      sync.Mutex
	events  []string
	control int // console calls and dialogs of the forging page, which prove the listener works
}

func (b *browserLog) add(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.events = append(b.events, fmt.Sprintf(format, args...))
}

func (b *browserLog) take() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.events
	b.events = nil
	return out
}

// listen records the tab's events into b, and dismisses every dialog.
func (b *browserLog) listen(t *testing.T, ctx context.Context) {
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			if e.Message == "control page" {
				b.mu.Lock()
				b.control++
				b.mu.Unlock()
			} else {
				b.add("dialog %s: %q", e.Type, e.Message)
			}
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		case *runtime.EventConsoleAPICalled:
			if len(e.Args) == 1 && string(e.Args[0].Value) == `"control page"` {
				b.mu.Lock()
				b.control++
				b.mu.Unlock()
				return
			}
			b.add("console.%s", e.Type)
		case *runtime.EventExceptionThrown:
			b.add("exception: %s", e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			// A refused request (403, 404) is a network entry: expected.
			// Verbose and info entries are the browser's advice.
			if e.Entry.Source != log.EntrySourceNetwork && (e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning) {
				b.add("log %s %s: %s", e.Entry.Source, e.Entry.Level, e.Entry.Text)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// pngImage is a small valid PNG, for the image page.
func pngImage(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 48, 32))
	for x := range 48 {
		for y := range 32 {
			img.Set(x, y, color.RGBA{uint8(40 + 4*x), uint8(80 + 4*y), 200, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// forgery is the page another site serves to make the browser of a person
// logged in to the console post to it: a form that submits itself, and a
// fetch that sends the cookies.
var forgery = template.Must(template.New("").Parse(`<!DOCTYPE html>
<html><body>
<form id="f" method="post" action="{{.Console}}/redact">
<input name="path" value="{{.Path}}"><input name="version" value="{{.Version}}"><input name="csrf" value="forged">
</form>
<script>
console.log("control page");
alert("control page");
fetch({{.Console}} + "/restore", {method: "POST", mode: "no-cors", credentials: "include",
  body: new URLSearchParams({path: {{.Path}}, version: {{.Version}}, csrf: "forged"})});
document.getElementById("f").submit();
</script>
</body></html>`))

// TestBrowser drives the console in headless Chromium: log in, browse, open
// a file and an image, compare two versions, restore, redact, read the audit
// log, search, log out; a file whose name and content are XSS payloads runs
// nothing; forged cross-site posts change nothing.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	const token = "lead-token-0123456789"
	ts, err := mcpserver.ParseTokens([]byte(`{"tenants": [{"name": "team-lead", "token": "` + token + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, web.Options{Tokens: ts})
	f.create("agent-1", "/memories/projects/launch.md", "# Launch plan\n\n- freeze on Monday\n- ship on Tuesday\n- announce on Wednesday\n")
	f.replace("agent-2", "/memories/projects/launch.md", "ship on Tuesday", "ship on Thursday (QA found a blocker)")
	f.create("agent-1", "/memories/customers/acme.md", "Contact: Jane Doe\nAPI key: sk-live-51Habc123\nPrefers email.\n")
	f.replace("agent-3", "/memories/customers/acme.md", "API key: sk-live-51Habc123", "API key: (in the vault)")
	f.create("agent-2", "/memories/notes/standup.md", "Daily at 9:30, room 4.\n")
	if _, err := f.h.Write(memory.WithActor(context.Background(), "agent-2"), "/memories/diagrams/flow.png", pngImage(t), ""); err != nil {
		t.Fatal(err)
	}
	hostileName := `/memories/<img src=x onerror=alert("name")>.md`
	f.create(`<img src=x onerror=alert("actor")>`, hostileName,
		"<script>alert('script')</script>\n<img src=x onerror=alert('img')>\n[click me](javascript:alert('link'))\n"+
			"<a href=\"javascript:alert('a')\">a link</a>\n<svg onload=alert('svg')></svg>\n"+
			"<!-- <img src=x onerror=alert('comment')> -->\n<style>body{display:none}</style>\n")

	console := httptest.NewServer(f.srv)
	defer console.Close()
	acme := f.ids("customers/acme.md")
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		forgery.Execute(w, map[string]string{"Console": console.URL, "Path": "/memories/customers/acme.md", "Version": acme[0]})
	}))
	defer evil.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.Headless,
		chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 720))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	var blog browserLog
	blog.listen(t, ctx) // starts the browser
	deadline := time.AfterFunc(60*time.Second, cancel)
	defer deadline.Stop()

	shots := os.Getenv(screenshotsEnv)
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ran := blog.take(); len(ran) > 0 {
			t.Errorf("%s: the page ran something: %q", name, ran)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// scripts counts what could run on the page: script elements, event
	// handler attributes, and links or forms to a javascript: URL.
	scripts := func() int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(
			'script, [onerror], [onload], [onclick], a[href^="javascript"], form[action^="javascript"], iframe, object, embed, style').length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// Log in.
	step("the login page", chromedp.Navigate(console.URL+"/tree"), chromedp.WaitVisible(chromedp.ID("token")))
	shot("web-login.png")
	step("log in", chromedp.SendKeys(chromedp.ID("token"), token), chromedp.Click(chromedp.CSS("form.login button")),
		chromedp.WaitVisible(chromedp.CSS("table.tree")))
	if who := text("span.who"); who != "team-lead" {
		t.Errorf("logged in as %q", who)
	}
	shot("web-tree.png")

	// Browse into a directory and open a file.
	step("a directory", chromedp.Click(chromedp.CSS(`a[href="/tree?path=%2fmemories%2fprojects"]`)), chromedp.WaitVisible(chromedp.CSS(`a[href="/file?path=%2fmemories%2fprojects%2flaunch.md"]`)))
	step("a file", chromedp.Click(chromedp.CSS(`a[href="/file?path=%2fmemories%2fprojects%2flaunch.md"]`)), chromedp.WaitVisible(chromedp.CSS("table.lines")))
	if got := text("table.lines tr:nth-child(4) pre"); got != "- ship on Thursday (QA found a blocker)" {
		t.Errorf("line 4: %q", got)
	}
	shot("web-file.png")
	step("the image", chromedp.Navigate(console.URL+"/file?path=/memories/diagrams/flow.png"), chromedp.WaitVisible(chromedp.CSS("p.image img")))
	if w, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelector("p.image img").naturalWidth`)); err != nil || w != 48 {
		t.Errorf("the image's width: %d, %v", w, err)
	}

	// The history, and the diff of its two versions.
	step("the history", chromedp.Navigate(console.URL+"/file?path=/memories/projects/launch.md"),
		chromedp.Click(chromedp.CSS(`a[href="/history?path=%2fmemories%2fprojects%2flaunch.md"]`)), chromedp.WaitVisible(chromedp.CSS("table.history")))
	shot("web-history.png")
	step("the diff", chromedp.Click(chromedp.CSS("main form button")), chromedp.WaitVisible(chromedp.CSS("pre.diff")))
	if got := text("pre.diff .add"); got != "+- ship on Thursday (QA found a blocker)" {
		t.Errorf("the diff adds %q", got)
	}
	shot("web-diff.png")

	// Restore the first version of acme.md, then redact the API key.
	step("the restore's confirmation", chromedp.Navigate(console.URL+"/history?path=/memories/customers/acme.md"),
		chromedp.Click(chromedp.CSS(`a[href^="/restore?"]`)), chromedp.WaitVisible(chromedp.CSS("p.confirm")))
	shot("web-restore.png")
	step("restore", chromedp.Click(chromedp.CSS("main form button")), chromedp.WaitVisible(chromedp.CSS("p.done")))
	ids := f.ids("customers/acme.md")
	if got, want := text("p.done"), "Restored /memories/customers/acme.md to version "+ids[0]+": its new version is "+ids[2]+"."; got != want {
		t.Errorf("after the restore: %q, want %q", got, want)
	}
	// The restored content holds the key again: change it, then redact
	// every version that held it.
	f.replace("agent-3", "/memories/customers/acme.md", "API key: sk-live-51Habc123", "API key: (in the vault)")
	step("the redaction's confirmation", chromedp.Navigate(console.URL+"/redact?path=/memories/customers/acme.md&version="+ids[0]),
		chromedp.WaitVisible(chromedp.CSS("p.confirm")))
	shot("web-redact.png")
	step("redact", chromedp.Click(chromedp.CSS("main form button")), chromedp.WaitVisible(chromedp.CSS("p.done")))
	if got, want := text("p.done"), "Redacted 2 versions of /memories/customers/acme.md: "+ids[0]+", "+ids[2]+"."; got != want {
		t.Errorf("after the redaction: %q, want %q", got, want)
	}
	for _, id := range []string{ids[0], ids[2]} {
		if _, _, err := f.hs.Show(context.Background(), "customers/acme.md", id); !errors.Is(err, history.ErrNoContent) {
			t.Errorf("version %s after the redaction: %v", id, err)
		}
	}
	step("the audit log", chromedp.Navigate(console.URL+"/audit?actor=team-lead"), chromedp.WaitVisible(chromedp.CSS("table.audit")))
	if got := text("table.audit tbody tr:first-child td:nth-child(3)"); got != "redacted" {
		t.Errorf("the last event of team-lead: %q", got)
	}
	step("the whole audit log", chromedp.Navigate(console.URL+"/audit"), chromedp.WaitVisible(chromedp.CSS("table.audit")))
	shot("web-audit.png")
	step("search", chromedp.Navigate(console.URL+"/search?q=ship+thursday"), chromedp.WaitVisible(chromedp.CSS("ol.hits")))
	shot("web-search.png")

	// The hostile file runs nothing, on any page that shows it.
	hostile := strings.NewReplacer("<", "%3c", ">", "%3e", `"`, "%22", " ", "%20", "=", "%3d", "(", "%28", ")", "%29").Replace(hostileName)
	hids := f.ids(strings.TrimPrefix(hostileName, "/memories/"))
	for _, p := range []string{"/tree", "/file?path=" + hostile, "/file?view=md&path=" + hostile, "/history?path=" + hostile,
		"/audit", "/search?q=alert", "/redact?path=" + hostile + "&version=" + hids[0]} {
		step("hostile "+p, chromedp.Navigate(console.URL+p), chromedp.WaitVisible(chromedp.CSS("main")), chromedp.Sleep(100*time.Millisecond))
		if n := scripts(); n != 0 {
			t.Errorf("%s: %d elements that could run", p, n)
		}
	}
	if got := text("h1"); got != `Redact version `+hids[0]+` of `+hostileName+`?` {
		t.Errorf("the hostile name shows as %q", got)
	}

	// Forged posts from another site (another host, and another port of
	// this one) change nothing.
	before := len(f.ids("customers/acme.md"))
	for _, site := range []string{strings.Replace(evil.URL, "127.0.0.1", "localhost", 1), evil.URL} {
		if err := chromedp.Do(ctx, chromedp.Navigate(site), chromedp.WaitVisible(chromedp.CSS("p.error"))); err != nil {
			t.Fatalf("the forgery from %s: %v", site, err)
		}
		blog.take() // the forging page's own script ran, by design
		if got := text("p.error"); got != "This form is out of date or did not come from this console, so nothing was changed. Go back, reload the page and try again." {
			t.Errorf("the forgery from %s got %q", site, got)
		}
	}
	time.Sleep(200 * time.Millisecond) // the fetch
	if after := len(f.ids("customers/acme.md")); after != before {
		t.Errorf("a forged post changed the history: %d versions, then %d", before, after)
	}
	vs, _ := f.hs.History(context.Background(), "customers/acme.md")
	for _, v := range vs {
		if v.Redacted != nil && v.Redacted.Actor != "team-lead" || v.Actor == "" {
			t.Errorf("a forged post: %+v", v)
		}
	}
	blog.mu.Lock()
	if blog.control != 4 {
		t.Errorf("the listener saw %d console calls and dialogs of the forging page, want 4", blog.control)
	}
	blog.mu.Unlock()

	// Log out.
	step("log out", chromedp.Navigate(console.URL+"/tree"), chromedp.Click(chromedp.CSS("form.logout button")),
		chromedp.WaitVisible(chromedp.ID("token")))
	step("logged out", chromedp.Navigate(console.URL+"/tree"), chromedp.WaitVisible(chromedp.ID("token")))
	if loc, _ := chromedp.Run(ctx, chromedp.Location()); loc != console.URL+"/login" {
		t.Errorf("after logging out, /tree is %s", loc)
	}
}
