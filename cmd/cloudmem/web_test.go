package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWebCommandErrors: what "cloudmem web" and "cloudmem mcp --web"
// refuse, and how they say so.
func TestWebCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"beyond loopback without tokens", []string{"--store", dir, "web", "--http", "0.0.0.0:0"}, exitFail,
			"cloudmem web: web: serving beyond loopback needs tokens: 0.0.0.0:0 is not a loopback address; give tokens (a token file or the environment) or OAuth\n"},
		{"a certificate without its key", []string{"--store", dir, "web", "--tls-cert", "c.pem"}, exitUsage,
			"cloudmem web: --tls-cert and --tls-key go together\nUsage: cloudmem web [--http ADDR] [--token-file FILE | --oauth-issuer URL --oauth-audience URI] [--tls-cert FILE --tls-key FILE] [--readonly]\nRun 'cloudmem web --help' for more.\n"},
		{"a mount table and a store", []string{"--store", dir, "--mount", "a=" + dir, "web"}, exitUsage,
			"cloudmem web: --store and --mount cannot be used together: put the store under a --mount too\nUsage: cloudmem web [--http ADDR] [--token-file FILE | --oauth-issuer URL --oauth-audience URI] [--tls-cert FILE --tls-key FILE] [--readonly]\nRun 'cloudmem web --help' for more.\n"},
		{"a bad history parameter of a mount", []string{"--mount", "a=file://" + dir + "?history_keep=2", "web"}, exitFail,
			"cloudmem web: mount a: history: history_keep needs history=on\n"},
		{"an issuer without an audience", []string{"--store", dir, "web", "--oauth-issuer", "https://idp.example.com"}, exitUsage,
			"cloudmem web: --oauth-issuer and --oauth-audience go together\nUsage: cloudmem web [--http ADDR] [--token-file FILE | --oauth-issuer URL --oauth-audience URI] [--tls-cert FILE --tls-key FILE] [--readonly]\nRun 'cloudmem web --help' for more.\n"},
		{"mcp --web without --http", []string{"--store", dir, "mcp", "--web"}, exitUsage,
			"cloudmem mcp: --web needs --http\nUsage: cloudmem mcp [--http ADDR [--token-file FILE] [--tls-cert FILE --tls-key FILE]]\nRun 'cloudmem mcp --help' for more.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cloudmem(tc.args, "", nil)
			if code != tc.code || stderr != tc.stderr {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, stderr, tc.code, tc.stderr)
			}
		})
	}
}

// startServer starts the server process and returns its base URL, read
// from its stderr by find, and a function that stops it with SIGTERM and
// checks that it exits cleanly.
func startServer(t *testing.T, server *exec.Cmd, find func(line string) string) (string, func()) {
	t.Helper()
	stderr, err := server.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var base string
	for base == "" && lines.Scan() {
		base = find(lines.Text())
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		server.Process.Kill()
		t.Fatalf("no URL on stderr (got %q)", base)
	}
	rest := make(chan string)
	go func() { b, _ := io.ReadAll(stderr); rest <- string(b) }()
	return base, func() {
		t.Helper()
		if err := server.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error)
		go func() { exited <- server.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("after SIGTERM: %v; stderr: %s", err, <-rest)
			}
		case <-time.After(20 * time.Second):
			server.Process.Kill()
			t.Fatal("the server did not stop on SIGTERM")
		}
	}
}

// get fetches base+path with c and returns the status and the body.
func get(t *testing.T, c *http.Client, base, path string) (int, string) {
	t.Helper()
	resp, err := c.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestWebProcess runs "cloudmem web" in a process of its own, on loopback
// without tokens, and stops it with SIGTERM.
func TestWebProcess(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, stop := startServer(t, cliProcess(t, "--store", dir, "web", "--http", "127.0.0.1:0", "--actor", "lead"), func(line string) string {
		u, _ := strings.CutPrefix(line, "cloudmem web: serving ")
		return strings.TrimSuffix(u, "/")
	})
	defer stop()
	code, body := get(t, http.DefaultClient, base, "/file?path=/memories/a.md")
	if want := `<tr><td class="n">1</td><td><pre>hello</pre></td></tr>`; code != http.StatusOK || !strings.Contains(body, want) ||
		!strings.Contains(body, `<span class="who">lead</span>`) {
		t.Errorf("GET /file: %d\n%s", code, body)
	}
}

// TestMCPWeb runs "cloudmem mcp --http ADDR --web": the console beside MCP,
// with the MCP server's token.
func TestMCPWeb(t *testing.T) {
	const token = "process-token-0123456789"
	server := cliProcess(t, "--store", t.TempDir(), "mcp", "--http", "127.0.0.1:0", "--web")
	server.Env = append(server.Env, mcpTokenEnv+"="+token)
	base, stop := startServer(t, server, func(line string) string {
		_, rest, ok := strings.Cut(line, " url=")
		if !ok {
			return ""
		}
		u, _, _ := strings.Cut(rest, " ")
		return strings.TrimSuffix(u, "/mcp")
	})
	defer stop()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	if code, body := get(t, c, base, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, c, base, "/tree"); code != http.StatusOK || !strings.Contains(body, `<form class="login" method="post" action="/login">`) {
		t.Errorf("/tree before the login: %d\n%s", code, body)
	}
	resp, err := c.PostForm(base+"/login", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `<span class="who">default</span>`) ||
		!strings.Contains(string(b), `<p class="empty">This directory holds no file.</p>`) {
		t.Errorf("after the login: %d\n%s", resp.StatusCode, b)
	}
}

// TestWebMounts runs "cloudmem --mount ... web": each mounted store at
// /memories/NAME with its own history; a read-only mount shows its
// versions and no action, and refuses a restore.
func TestWebMounts(t *testing.T) {
	team, docs := t.TempDir(), t.TempDir()
	for _, c := range []struct{ store, text string }{
		{team, "first\n"}, {team, "second\n"}, {docs, "doc\n"},
	} {
		if code, _, stderr := cloudmem([]string{"--store", "file://" + c.store + "?history=on", "put", "/memories/a.md", "-", "--force"}, c.text, nil); code != 0 {
			t.Fatalf("put: %d %s", code, stderr)
		}
	}
	base, stop := startServer(t, cliProcess(t, "--mount", "team=file://"+team+"?history=on", "--mount", "docs="+docs+":ro",
		"web", "--http", "127.0.0.1:0", "--actor", "lead"), func(line string) string {
		u, _ := strings.CutPrefix(line, "cloudmem web: serving ")
		return strings.TrimSuffix(u, "/")
	})
	defer stop()
	code, body := get(t, http.DefaultClient, base, "/tree")
	for _, dir := range []string{"docs", "team"} {
		if want := `<tr class="dir"><td><a href="/tree?path=%2fmemories%2f` + dir + `">` + dir + `/</a></td>`; code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET /tree: %d, lacks %s\n%s", code, want, body)
		}
	}
	code, body = get(t, http.DefaultClient, base, "/history?path=/memories/team/a.md")
	if code != http.StatusOK || strings.Count(body, `name="from"`) != 2 || !strings.Contains(body, `">Restore</a>`) {
		t.Errorf("team's history: %d\n%s", code, body)
	}
	code, body = get(t, http.DefaultClient, base, "/history?path=/memories/docs/a.md")
	if code != http.StatusOK || strings.Count(body, `name="from"`) != 1 || strings.Contains(body, "/restore?") {
		t.Errorf("docs' history: %d\n%s", code, body)
	}
	code, body = get(t, http.DefaultClient, base, "/audit")
	if code != http.StatusOK || strings.Count(body, "<tr><td>") != 3 || !strings.Contains(body, `<a href="/history?path=%2fmemories%2fdocs%2fa.md">/memories/docs/a.md</a>`) {
		t.Errorf("the audit log: %d\n%s", code, body)
	}
	code, body = get(t, http.DefaultClient, base, "/restore?path=/memories/docs/a.md&version=0123456789abcdef")
	if code != http.StatusForbidden || !strings.Contains(body, `<p class="error" role="alert">You can read this store but not change it, so nothing was changed.</p>`) {
		t.Errorf("a restore in the read-only mount: %d\n%s", code, body)
	}
}
