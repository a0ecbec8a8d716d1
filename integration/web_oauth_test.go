package integration

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// console is a browser session of the web console: a cookie jar, and no
// redirect followed, so that each answer is checked as sent.
type console struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newConsole(t *testing.T, base string) *console {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &console{t: t, base: base, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// do sends a request and returns the status and body.
func (c *console) do(method, path string, form url.Values, header ...string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, h := range header {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Set(k, v)
	}
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// page GETs path and fails the test unless it answers 200.
func (c *console) page(path string) string {
	c.t.Helper()
	code, body := c.do(http.MethodGet, path, nil)
	if code != http.StatusOK {
		c.t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf returns the CSRF token of the session's pages.
func (c *console) csrf() string {
	c.t.Helper()
	m := csrfField.FindStringSubmatch(c.page("/tree"))
	if m == nil {
		c.t.Fatal("no CSRF token on the tree page")
	}
	return m[1]
}

// TestWebOAuthHydra logs into the web console of "cloudmem mcp --http --web
// --oauth-issuer" with Ory Hydra's access tokens: a memory:write token's
// person sees the tenant's files only and restores a version; a
// memory:read token's person sees no action, and neither a POST of theirs
// nor a forged cross-site POST changes anything.
func TestWebOAuthHydra(t *testing.T) {
	h := startHydra(t)
	port := freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	audience := base + mcpserver.MCPPath
	writerID := h.client(t, "web-writer", "memory:read memory:write", audience)
	readerID := h.client(t, "web-reader", "memory:read", audience)

	dir := t.TempDir()
	tenants := filepath.Join(dir, "tenants.json")
	file := fmt.Sprintf(`{"tenants": [
		{"claim": %q, "name": "team", "prefix": "team"},
		{"claim": %q, "name": "team-reader", "prefix": "team"}
	]}`, writerID, readerID)
	if err := os.WriteFile(tenants, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	// Another tenant's file, which the team's console must not show.
	if err := os.MkdirAll(filepath.Join(store, "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "other", "secret.md"), []byte("not the team's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), buildCLI(t), "--store", "file://"+store+"?history=on", "mcp", "--http", fmt.Sprintf("127.0.0.1:%d", port),
		"--web", "--oauth-issuer", h.issuer, "--oauth-audience", audience, "--oauth-tenants", tenants)
	startProcess(t, "cloudmem", cmd)
	waitHTTP(t, base+mcpserver.HealthPath)

	writer := h.token(t, writerID, "web-writer", "memory:read memory:write", audience)
	for _, input := range []string{
		`{"command":"create","path":"/memories/plan.md","file_text":"first\n"}`,
		`{"command":"str_replace","path":"/memories/plan.md","old_str":"first","new_str":"second"}`,
	} {
		if res := mcpCall(t, base+mcpserver.MCPPath, writer, input); res.IsError {
			t.Fatalf("%s: %+v", input, res)
		}
	}
	content := func() string {
		data, err := os.ReadFile(filepath.Join(store, "team", "plan.md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	versionID := regexp.MustCompile(`name="from" value="([0-9a-f]{16})"`)

	// The writer's person logs in with the Hydra token.
	w := newConsole(t, base)
	if code, body := w.do(http.MethodPost, "/login", url.Values{"token": {writer}}); code != http.StatusSeeOther {
		t.Fatalf("login with the writer's token: %d\n%s", code, body)
	}
	tree := w.page("/tree")
	for _, frag := range []string{`<span class="who">team</span>`,
		`<tr class="file"><td><a href="/file?path=%2fmemories%2fplan.md">plan.md</a></td><td>7 bytes</td>`} {
		if !strings.Contains(tree, frag) {
			t.Errorf("the writer's tree lacks %s:\n%s", frag, tree)
		}
	}
	if strings.Contains(tree, "secret") || strings.Contains(tree, "other") {
		t.Errorf("the writer's tree shows another tenant's files:\n%s", tree)
	}
	if code, body := w.do(http.MethodGet, "/file?path=/memories/other/secret.md", nil); code != http.StatusNotFound {
		t.Errorf("another tenant's file: %d\n%s", code, body)
	}
	hist := w.page("/history?path=/memories/plan.md")
	ids := versionID.FindAllStringSubmatch(hist, -1)
	if len(ids) != 2 {
		t.Fatalf("the history shows %d versions:\n%s", len(ids), hist)
	}
	oldest := ids[1][1]
	if !strings.Contains(hist, `<a href="/restore?path=%2fmemories%2fplan.md&amp;version=`+oldest+`">Restore</a>`) {
		t.Errorf("the writer's history has no Restore:\n%s", hist)
	}

	// The reader's person: read-only, no action.
	reader := h.token(t, readerID, "web-reader", "memory:read", audience)
	r := newConsole(t, base)
	if code, body := r.do(http.MethodPost, "/login", url.Values{"token": {reader}}); code != http.StatusSeeOther {
		t.Fatalf("login with the reader's token: %d\n%s", code, body)
	}
	hist = r.page("/history?path=/memories/plan.md")
	if !strings.Contains(hist, `<span class="who">team-reader · read-only</span>`) || strings.Contains(hist, "/restore?") || strings.Contains(hist, "/redact?") {
		t.Errorf("the reader's history:\n%s", hist)
	}
	// A POST with the reader's own session, and forged cross-site POSTs
	// with either session's cookie, change nothing.
	restore := url.Values{"path": {"/memories/plan.md"}, "version": {oldest}}
	withCSRF := func(c *console) url.Values {
		v := url.Values{"csrf": {c.csrf()}}
		for k, vs := range restore {
			v[k] = vs
		}
		return v
	}
	for name, c := range map[string]struct {
		console *console
		form    url.Values
		header  []string
		want    string
	}{
		"the reader's own":          {r, withCSRF(r), nil, "You can read this store but not change it, so nothing was changed."},
		"forged, the reader's":      {r, restore, []string{"Origin: http://evil.example", "Sec-Fetch-Site: cross-site"}, "This form is out of date or did not come from this console, so nothing was changed. Go back, reload the page and try again."},
		"forged, the writer's":      {w, restore, []string{"Origin: http://evil.example", "Sec-Fetch-Site: cross-site"}, "This form is out of date or did not come from this console, so nothing was changed. Go back, reload the page and try again."},
		"forged with a CSRF token":  {w, withCSRF(w), []string{"Origin: http://evil.example", "Sec-Fetch-Site: cross-site"}, "This form is out of date or did not come from this console, so nothing was changed. Go back, reload the page and try again."},
		"the writer's without CSRF": {w, restore, nil, "This form is out of date or did not come from this console, so nothing was changed. Go back, reload the page and try again."},
	} {
		code, body := c.console.do(http.MethodPost, "/restore", c.form, c.header...)
		if code != http.StatusForbidden || !strings.Contains(body, `<p class="error" role="alert">`+c.want+`</p>`) {
			t.Errorf("%s POST: %d\n%s", name, code, body)
		}
	}
	if got := content(); got != "second\n" {
		t.Fatalf("a refused POST changed the file: %q", got)
	}
	if n := len(versionID.FindAllString(w.page("/history?path=/memories/plan.md"), -1)); n != 2 {
		t.Errorf("a refused POST recorded a version: %d versions", n)
	}

	// The writer's restore goes through, recorded as the tenant.
	if code, body := w.do(http.MethodPost, "/restore", withCSRF(w)); code != http.StatusOK {
		t.Fatalf("the writer's restore: %d\n%s", code, body)
	}
	if got := content(); got != "first\n" {
		t.Errorf("after the restore the file holds %q", got)
	}
	if res := mcpCall(t, base+mcpserver.MCPPath, writer, `{"command":"view","path":"/memories/plan.md"}`); res != (memory.Result{Text: "Here's the content of /memories/plan.md with line numbers:\n     1\tfirst\n     2\t"}) {
		t.Errorf("MCP after the restore: %+v", res)
	}
	audit := w.page("/audit")
	if !strings.Contains(audit, `<td>team</td><td>modified, restored from `+oldest+`</td>`) {
		t.Errorf("the audit log does not show the team's restore:\n%s", audit)
	}
}
