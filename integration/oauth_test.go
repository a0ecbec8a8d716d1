package integration

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// hydraBinary returns Ory Hydra's binary ($CLOUDMEM_HYDRA, which
// integration/hydra.sh prints); without it the test fails under CI and
// skips otherwise.
func hydraBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CLOUDMEM_HYDRA")
	why := "CLOUDMEM_HYDRA is not set"
	if bin != "" {
		if _, err := os.Stat(bin); err == nil {
			return bin
		}
		why = "CLOUDMEM_HYDRA=" + bin + " does not exist"
	}
	msg := "Ory Hydra is missing (" + why + "). Build it with:\n\texport CLOUDMEM_HYDRA=$(bash integration/hydra.sh)"
	if strict() {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// freePort returns a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startProcess starts cmd with its output in a file of the test's, and
// kills it at the end of the test.
func startProcess(t *testing.T, name string, cmd *exec.Cmd) *os.File {
	t.Helper()
	log, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			data, _ := os.ReadFile(log.Name())
			t.Logf("%s's log:\n%s", name, data)
		}
		log.Close()
	})
	return log
}

// waitHTTP waits until GET u answers 200.
func waitHTTP(t *testing.T, u string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer 200 within 60 s: %v", u, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// hydra is a running Ory Hydra: its issuer and its admin API.
type hydra struct {
	issuer, admin, tokenEndpoint string
}

// startHydra runs Hydra with its in-memory database on loopback ports,
// issuing JWT access tokens, its telemetry off.
func startHydra(t *testing.T) *hydra {
	t.Helper()
	bin := hydraBinary(t)
	public, admin := freePort(t), freePort(t)
	h := &hydra{issuer: fmt.Sprintf("http://127.0.0.1:%d", public), admin: fmt.Sprintf("http://127.0.0.1:%d", admin)}
	cmd := exec.CommandContext(t.Context(), bin, "serve", "all", "--dev", "--sqa-opt-out")
	cmd.Env = append(os.Environ(),
		"DSN=memory",
		"URLS_SELF_ISSUER="+h.issuer,
		"STRATEGIES_ACCESS_TOKEN=jwt",
		"SECRETS_SYSTEM=integration-test-secret-0123456789abcdef",
		"SERVE_PUBLIC_HOST=127.0.0.1", "SERVE_PUBLIC_PORT="+strconv.Itoa(public),
		"SERVE_ADMIN_HOST=127.0.0.1", "SERVE_ADMIN_PORT="+strconv.Itoa(admin),
		"SQA_OPT_OUT=true", "LOG_LEVEL=warn")
	startProcess(t, "hydra", cmd)
	waitHTTP(t, h.admin+"/health/ready")
	// The issuer exactly as Hydra names it (it may add a slash).
	var meta struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	getJSON(t, h.issuer+"/.well-known/openid-configuration", &meta)
	h.issuer, h.tokenEndpoint = meta.Issuer, meta.TokenEndpoint
	return h
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

// postJSON posts body to u and decodes the answer into v; want is the
// status expected.
func postJSON(t *testing.T, u string, body any, want int, v any) {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(u, "application/json", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("POST %s: HTTP %d, want %d: %s", u, resp.StatusCode, want, got)
	}
	if v != nil {
		if err := json.Unmarshal(got, v); err != nil {
			t.Fatalf("POST %s: %v", u, err)
		}
	}
}

// client registers a client-credentials client allowed scope and
// audiences, and returns its id.
func (h *hydra) client(t *testing.T, name, scope string, audiences ...string) string {
	t.Helper()
	var c struct {
		ID string `json:"client_id"`
	}
	postJSON(t, h.admin+"/admin/clients", map[string]any{
		"client_name": name, "client_secret": name + "-secret-0123456789",
		"grant_types": []string{"client_credentials"}, "response_types": []string{"token"},
		"scope": scope, "audience": audiences, "token_endpoint_auth_method": "client_secret_basic",
	}, http.StatusCreated, &c)
	return c.ID
}

// token gets an access token for client (named name) by the client
// credentials grant, with scope and audience.
func (h *hydra) token(t *testing.T, id, name, scope, audience string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {scope}, "audience": {audience}}
	req, err := http.NewRequest(http.MethodPost, h.tokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(name+"-secret-0123456789"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("token of %s: HTTP %d: %s", name, resp.StatusCode, body)
	}
	return tok.AccessToken
}

// lifespan sets the lifespan of the access tokens client id gets by the
// client credentials grant.
func (h *hydra) lifespan(t *testing.T, id string, d time.Duration) {
	t.Helper()
	data, _ := json.Marshal(map[string]string{"client_credentials_grant_access_token_lifespan": d.String()})
	req, err := http.NewRequest(http.MethodPut, h.admin+"/admin/clients/"+url.PathEscape(id)+"/lifespans", strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("lifespan of %s: HTTP %d: %s", id, resp.StatusCode, body)
	}
}

// signWith replaces Hydra's access token signing keys by set (a JSON Web
// Key Set holding private keys): its tokens are then signed with them.
func (h *hydra) signWith(t *testing.T, set []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, h.admin+"/admin/keys/hydra.jwt.access-token", strings.NewReader(string(set)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if body, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		t.Fatalf("Hydra's new signing keys: HTTP %d: %s", resp.StatusCode, body)
	}
}

// sharedSigningKey returns a fresh RSA key with id kid, as a JSON Web Key
// Set with its private part, for two Hydras to sign with.
func sharedSigningKey(t *testing.T, kid string) []byte {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	set, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key, KeyID: kid, Algorithm: "RS256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// mcpCall connects to the MCP endpoint with token and runs one memory
// command.
func mcpCall(t *testing.T, endpoint, token, input string) memory.Result {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearerTransport(token)}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "integration"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolName, Arguments: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("calling %s: %v", input, err)
	}
	r, err := mcpserver.ResultOf(res)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// challenge posts to the MCP endpoint with token and returns the status,
// the WWW-Authenticate header and the body.
func challenge(t *testing.T, endpoint, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
}

// TestOAuthHydra runs "cloudmem mcp --http --oauth-issuer" against Ory
// Hydra: clients get JWT access tokens by the client credentials grant and
// call the memory tool with them; the refusals Hydra's tokens can provoke
// (another audience, no memory scope, a read scope that writes, a tampered
// token, alg none, a token that expired, a token of a second Hydra, with
// its own key and with a key both Hydras sign with) get their texts, and a
// key Hydra rotates in is fetched and accepted.
func TestOAuthHydra(t *testing.T) {
	h, h2 := startHydra(t), startHydra(t) // h2: another issuer
	port := freePort(t)
	audience := fmt.Sprintf("http://127.0.0.1:%d%s", port, mcpserver.MCPPath)
	const other = "https://other.example.com/mcp"
	writerID := h.client(t, "writer", "memory:read memory:write", audience)
	readerID := h.client(t, "reader", "memory:read", audience)
	otherID := h.client(t, "other", "memory:read memory:write", other)
	noScopeID := h.client(t, "noscope", "profile", audience)
	briefID := h.client(t, "brief", "memory:read memory:write", audience)
	h.lifespan(t, briefID, 10*time.Second)
	// A token of the other issuer signed with its own key, and one signed
	// with a key both Hydras then sign with (set before cloudmem starts and
	// reads h's keys), so that only its iss is wrong.
	strangerID := h2.client(t, "stranger", "memory:read memory:write", audience)
	strangerOwnKey := h2.token(t, strangerID, "stranger", "memory:read memory:write", audience)
	shared := sharedSigningKey(t, "shared-by-both")
	h.signWith(t, shared)
	h2.signWith(t, shared)
	strangerSharedKey := h2.token(t, strangerID, "stranger", "memory:read memory:write", audience)

	dir := t.TempDir()
	tenants := filepath.Join(dir, "tenants.json")
	file := fmt.Sprintf(`{"tenants": [
		{"claim": %q, "name": "team", "prefix": "team"},
		{"claim": %q, "name": "team-reader", "prefix": "team"},
		{"claim": %q, "name": "team-brief", "prefix": "team"},
		{"claim": %q, "name": "team-stranger", "prefix": "team"}
	]}`, writerID, readerID, briefID, strangerID)
	if err := os.WriteFile(tenants, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "store")
	cmd := exec.CommandContext(t.Context(), buildCLI(t), "--store", store, "mcp", "--http", fmt.Sprintf("127.0.0.1:%d", port),
		"--oauth-issuer", h.issuer, "--oauth-audience", audience, "--oauth-tenants", tenants, "--oauth-leeway", "1s")
	started := time.Now() // cloudmem fetches Hydra's keys at its start
	startProcess(t, "cloudmem", cmd)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitHTTP(t, base+mcpserver.HealthPath)
	endpoint := base + mcpserver.MCPPath
	metadata := base + mcpserver.ResourceMetadataPath + mcpserver.MCPPath

	var meta map[string]any
	getJSON(t, metadata, &meta)
	if got, want := fmt.Sprint(meta), fmt.Sprintf("map[authorization_servers:[%s] bearer_methods_supported:[header] resource:%s resource_name:cloudmem scopes_supported:[memory:read memory:write]]", h.issuer, audience); got != want {
		t.Errorf("metadata: %s\nwant %s", got, want)
	}

	writer := h.token(t, writerID, "writer", "memory:read memory:write", audience)
	if got, want := mcpCall(t, endpoint, writer, `{"command":"create","path":"/memories/team.md","file_text":"from Hydra\n"}`), (memory.Result{Text: "File created successfully at: /memories/team.md"}); got != want {
		t.Errorf("writer's create: %+v, want %+v", got, want)
	}
	reader := h.token(t, readerID, "reader", "memory:read", audience)
	if got, want := mcpCall(t, endpoint, reader, `{"command":"view","path":"/memories/team.md"}`), (memory.Result{Text: "Here's the content of /memories/team.md with line numbers:\n     1\tfrom Hydra\n     2\t"}); got != want {
		t.Errorf("reader's view: %+v, want %+v", got, want)
	}
	if got, want := mcpCall(t, endpoint, reader, `{"command":"create","path":"/memories/x.md","file_text":"no\n"}`), (memory.Result{Text: "Error: The memory directory is read-only: create is not allowed", IsError: true}); got != want {
		t.Errorf("reader's create: %+v, want %+v", got, want)
	}
	// A token that lives 10 s serves while it lives; it is refused once
	// expired, below.
	brief := h.token(t, briefID, "brief", "memory:read memory:write", audience)
	if got, want := mcpCall(t, endpoint, brief, `{"command":"view","path":"/memories/team.md"}`), (memory.Result{Text: "Here's the content of /memories/team.md with line numbers:\n     1\tfrom Hydra\n     2\t"}); got != want {
		t.Errorf("view with a token that lives 10 s: %+v, want %+v", got, want)
	}
	// The writer asking only for memory:read gets a read-only token.
	if got := mcpCall(t, endpoint, h.token(t, writerID, "writer", "memory:read", audience), `{"command":"delete","path":"/memories/team.md"}`); !got.IsError {
		t.Errorf("delete with a memory:read token: %+v", got)
	}

	invalid := func(desc string) string {
		return `401 Bearer error="invalid_token", error_description="` + desc + `", resource_metadata="` + metadata + `" ` + desc + "\n"
	}
	parts := strings.Split(writer, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	tampered := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"sub":"`+writerID, `"sub":"`+readerID, 1)))
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	for name, c := range map[string]struct{ token, want string }{
		"another audience": {h.token(t, otherID, "other", "memory:write", other), invalid("the token is for another audience")},
		"no memory scope": {h.token(t, noScopeID, "noscope", "profile", audience),
			`403 Bearer error="insufficient_scope", error_description="the token has neither the memory:read nor the memory:write scope", resource_metadata="` + metadata + `", scope="memory:read memory:write" the token has neither the memory:read nor the memory:write scope` + "\n"},
		"tampered":             {parts[0] + "." + tampered + "." + parts[2], invalid("the token's signature does not verify")},
		"alg none":             {none + "." + parts[1] + ".", invalid("the token is not a JWT signed with an allowed algorithm")},
		"no token":             {"", `401 Bearer resource_metadata="` + metadata + `", scope="memory:read memory:write" no bearer token` + "\n"},
		"not a JWT":            {"ory_at_opaque", invalid("the token is not a JWT signed with an allowed algorithm")},
		"another issuer's key": {strangerOwnKey, invalid("the token is not signed with a key of the issuer")},
		"another issuer":       {strangerSharedKey, invalid("the token is from another issuer")},
	} {
		if got := challenge(t, endpoint, c.token); got != c.want {
			t.Errorf("%s: %s\nwant %s", name, got, c.want)
		}
	}

	// Hydra rotates its signing key: new tokens name a kid cloudmem has
	// not seen, and it fetches the keys again (at most once per
	// DefaultKeyRefresh since its last fetch, at start).
	postJSON(t, h.admin+"/admin/keys/hydra.jwt.access-token", map[string]string{"alg": "RS256", "use": "sig"}, http.StatusCreated, nil)
	rotated := h.token(t, writerID, "writer", "memory:read memory:write", audience)
	if kidOf(t, rotated) == kidOf(t, writer) {
		t.Fatalf("Hydra still signs with %s after the rotation", kidOf(t, writer))
	}
	time.Sleep(time.Until(started.Add(mcpserver.DefaultKeyRefresh + time.Second)))
	if got, want := mcpCall(t, endpoint, rotated, `{"command":"view","path":"/memories/team.md"}`), (memory.Result{Text: "Here's the content of /memories/team.md with line numbers:\n     1\tfrom Hydra\n     2\t"}); got != want {
		t.Errorf("view with the rotated key: %+v, want %+v", got, want)
	}

	// The 10 s token has expired by now (the wait above, which this one
	// rarely extends, is 30 s), and the leeway of 1 s is over.
	time.Sleep(time.Until(expiryOf(t, brief).Add(2 * time.Second)))
	if got, want := challenge(t, endpoint, brief), invalid("the token has expired"); got != want {
		t.Errorf("expired: %s\nwant %s", got, want)
	}

	data, err := os.ReadFile(filepath.Join(store, "team", "team.md"))
	if err != nil || string(data) != "from Hydra\n" {
		t.Errorf("the store holds %q, %v", data, err)
	}
	entries, _ := os.ReadDir(filepath.Join(store, "team"))
	for _, e := range entries {
		if e.Name() != "team.md" && e.Name() != ".cloudmem" {
			t.Errorf("the store holds team/%s too", e.Name())
		}
	}
}

// kidOf returns the key id in a JWT's header.
func kidOf(t *testing.T, token string) string {
	t.Helper()
	header, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[0])
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(header, &h); err != nil {
		t.Fatal(err)
	}
	return h.Kid
}

// expiryOf returns a JWT's exp.
func expiryOf(t *testing.T, token string) time.Time {
	t.Helper()
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Exp int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &c); err != nil || c.Exp == 0 {
		t.Fatalf("the token's exp: %s, %v", payload, err)
	}
	return time.Unix(c.Exp, 0)
}
