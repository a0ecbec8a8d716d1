package mcpserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// fakeIssuer is an authorization server as a resource server sees it: its
// metadata and its key set, which a test rotates.
type fakeIssuer struct {
	*httptest.Server
	mu      sync.Mutex
	keys    []jose.JSONWebKey // published
	fetches atomic.Int32      // key set fetches
}

func newFakeIssuer(t *testing.T) *fakeIssuer {
	t.Helper()
	f := &fakeIssuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": f.URL, "jwks_uri": f.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		f.fetches.Add(1)
		f.mu.Lock()
		defer f.mu.Unlock()
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: f.keys})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// signingKey is a private key with its id.
type signingKey struct {
	kid string
	key *ecdsa.PrivateKey
}

func newKey(t *testing.T, kid string) signingKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid, k}
}

// publish replaces the issuer's key set with keys' public halves.
func (f *fakeIssuer) publish(keys ...signingKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = nil
	for _, k := range keys {
		f.keys = append(f.keys, jose.JSONWebKey{Key: &k.key.PublicKey, KeyID: k.kid, Algorithm: "ES256", Use: "sig"})
	}
}

// sign returns a JWT of claims signed by k.
func sign(t *testing.T, k signingKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: k.key},
		(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", k.kid))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const audience = "https://mem.example.com/mcp"

// oauthClock is a test's clock, moved by hand.
type oauthClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *oauthClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *oauthClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// oauthServer is an HTTP with OAuth from iss, over store, and a running
// test server of it.
func oauthServer(t *testing.T, iss *fakeIssuer, clock *oauthClock, tenants *mcpserver.ClaimTenants) (*mcpserver.OAuth, *httptest.Server, blob.Store) {
	t.Helper()
	o, err := mcpserver.NewOAuth(context.Background(), mcpserver.OAuthOptions{
		Issuer: iss.URL, Audience: audience, Tenants: tenants, Now: clock.Now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	store := mem.New(nil)
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: store, OAuth: o, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return o, ts, store
}

// claims returns valid claims for subject with scopes at now, changed by
// change (a nil value deletes the claim).
func claims(issuer, subject, scopes string, now time.Time, change map[string]any) map[string]any {
	c := map[string]any{
		"iss": issuer, "sub": subject, "aud": []string{audience}, "scope": scopes,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(), "jti": "x",
	}
	for k, v := range change {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// refusal is what the server answered a refused request.
type refusal struct {
	status    int
	challenge string
	body      string
}

func oauthPost(t *testing.T, url, token string) refusal {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+mcpserver.MCPPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return refusal{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)}
}

const metadataURL = "https://mem.example.com/.well-known/oauth-protected-resource/mcp"

func invalid(desc string) refusal {
	return refusal{401, `Bearer error="invalid_token", error_description="` + desc + `", resource_metadata="` + metadataURL + `"`, desc + "\n"}
}

// TestOAuthRefusals sends every token a resource server must refuse; each
// gets its 401 or 403 with the texts of docs/spec.md "OAuth over HTTP", and
// the store stays empty.
func TestOAuthRefusals(t *testing.T) {
	iss := newFakeIssuer(t)
	k1 := newKey(t, "k1")
	iss.publish(k1)
	clock := &oauthClock{now: time.Now()}
	tenants, err := mcpserver.ParseClaimTenants([]byte(`{"tenants": [{"claim": "alice-sub", "name": "alice", "prefix": "team/alice"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, ts, store := oauthServer(t, iss, clock, tenants)
	now := clock.Now()
	forger := newKey(t, "k1") // the issuer's key id, another key
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	payload, _ := json.Marshal(claims(iss.URL, "alice-sub", "memory:read memory:write", now, nil))
	valid := sign(t, k1, claims(iss.URL, "alice-sub", "memory:read memory:write", now, nil))
	hmac, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	hmacToken, err := jwt.Signed(hmac).Claims(claims(iss.URL, "alice-sub", "memory:write", now, nil)).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	scopeChallenge := func(desc string) refusal {
		return refusal{403, `Bearer error="insufficient_scope", error_description="` + desc + `", resource_metadata="` + metadataURL + `", scope="memory:read memory:write"`, desc + "\n"}
	}
	cases := []struct {
		name  string
		token string
		want  refusal
	}{
		{"no token", "", refusal{401, `Bearer resource_metadata="` + metadataURL + `", scope="memory:read memory:write"`, "no bearer token\n"}},
		{"not a JWT", "opaque-token-0123456789", invalid("the token is not a JWT signed with an allowed algorithm")},
		{"alg none", noneHeader + "." + base64.RawURLEncoding.EncodeToString(payload) + ".", invalid("the token is not a JWT signed with an allowed algorithm")},
		{"HMAC", hmacToken, invalid("the token is not a JWT signed with an allowed algorithm")},
		{"forged signature", sign(t, forger, claims(iss.URL, "alice-sub", "memory:write", now, nil)), invalid("the token's signature does not verify")},
		{"tampered payload", valid[:len(valid)-90] + "A" + valid[len(valid)-89:], invalid("the token's signature does not verify")},
		{"unknown kid", sign(t, newKey(t, "k9"), claims(iss.URL, "alice-sub", "memory:write", now, nil)), invalid("the token is not signed with a key of the issuer")},
		{"wrong issuer", sign(t, k1, claims(iss.URL, "alice-sub", "memory:write", now, map[string]any{"iss": "https://evil.example.com"})), invalid("the token is from another issuer")},
		{"wrong audience", sign(t, k1, claims(iss.URL, "alice-sub", "memory:write", now, map[string]any{"aud": "https://other.example.com/mcp"})), invalid("the token is for another audience")},
		{"no audience", sign(t, k1, claims(iss.URL, "alice-sub", "memory:write", now, map[string]any{"aud": nil})), invalid("the token is for another audience")},
		{"no expiry", sign(t, k1, claims(iss.URL, "alice-sub", "memory:write", now, map[string]any{"exp": nil})), invalid("the token has no expiry")},
		{"expired", sign(t, k1, claims(iss.URL, "alice-sub", "memory:write", now, map[string]any{"exp": now.Add(-2 * time.Minute).Unix(), "iat": now.Add(-time.Hour).Unix(), "nbf": now.Add(-time.Hour).Unix()})), invalid("the token has expired")},
		{"not yet valid", sign(t, k1, claims(iss.URL, "alice-sub", "memory:write", now, map[string]any{"nbf": now.Add(5 * time.Minute).Unix()})), invalid("the token is not valid yet")},
		{"issued in the future", sign(t, k1, claims(iss.URL, "alice-sub", "memory:write", now, map[string]any{"iat": now.Add(5 * time.Minute).Unix()})), invalid("the token is not valid yet")},
		{"no tenant claim", sign(t, k1, claims(iss.URL, "alice-sub", "memory:write", now, map[string]any{"sub": nil})), invalid("the token has no sub claim")},
		{"no scope", sign(t, k1, claims(iss.URL, "alice-sub", "openid profile", now, nil)), scopeChallenge("the token has neither the memory:read nor the memory:write scope")},
		{"no tenant", sign(t, k1, claims(iss.URL, "mallory-sub", "memory:write", now, nil)), scopeChallenge("the token's sub has no tenant on this server")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := oauthPost(t, ts.URL, c.token); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	if snap := snapshot(t, store, ""); len(snap) != 0 {
		t.Errorf("refused requests changed the store: %v", contents(snap))
	}
	// The valid token passes the check (and the SDK's).
	if got := oauthPost(t, ts.URL, valid); got.status == 401 || got.status == 403 {
		t.Errorf("the valid token was refused: %+v", got)
	}
}

// TestOAuthScopes runs MCP calls with a write token and a read token of one
// tenant: the read token views what the write token wrote, and its writes
// get the handler's read-only error and change nothing.
func TestOAuthScopes(t *testing.T) {
	iss := newFakeIssuer(t)
	k1 := newKey(t, "k1")
	iss.publish(k1)
	clock := &oauthClock{now: time.Now()}
	_, ts, store := oauthServer(t, iss, clock, nil) // each subject its own prefix
	ctx := context.Background()
	writer := connectHTTP(t, ts.URL, sign(t, k1, claims(iss.URL, "alice", "memory:read memory:write", clock.Now(), nil)))
	if got, want := call(ctx, writer, []byte(`{"command":"create","path":"/memories/a.md","file_text":"hello\n"}`)), (memory.Result{Text: "File created successfully at: /memories/a.md"}); got != want {
		t.Fatalf("create with memory:write: %+v, want %+v", got, want)
	}
	// Hydra's form: scp, a list.
	reader := connectHTTP(t, ts.URL, sign(t, k1, claims(iss.URL, "alice", "", clock.Now(), map[string]any{"scope": nil, "scp": []string{"memory:read"}})))
	if got := call(ctx, reader, []byte(`{"command":"view","path":"/memories/a.md"}`)); got.IsError || got.Text != "Here's the content of /memories/a.md with line numbers:\n     1\thello\n     2\t" {
		t.Errorf("view with memory:read: %+v", got)
	}
	want := memory.Result{Text: "Error: The memory directory is read-only: create is not allowed", IsError: true}
	if got := call(ctx, reader, []byte(`{"command":"create","path":"/memories/b.md","file_text":"x\n"}`)); got != want {
		t.Errorf("create with memory:read: %+v, want %+v", got, want)
	}
	if got, want := contents(snapshot(t, store, "")), map[string]string{"alice/a.md": "hello\n"}; !equalMaps(got, want) {
		t.Errorf("store: %v, want %v", got, want)
	}
}

// equalMaps compares a store's files, leaving out the handler's own
// bookkeeping (.cloudmem), with the files wanted.
func equalMaps(a, b map[string]string) bool {
	for k := range a {
		if strings.Contains(k, "/.cloudmem/") {
			delete(a, k)
		}
	}
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestOAuthKeyRotation: a token signed with a key the server has not seen
// makes it fetch the issuer's keys again (at most once per KeyRefresh), so a
// rotated key is accepted and a made-up one is refused without a fetch per
// request.
func TestOAuthKeyRotation(t *testing.T) {
	iss := newFakeIssuer(t)
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	iss.publish(k1)
	clock := &oauthClock{now: time.Now()}
	o, _, _ := oauthServer(t, iss, clock, nil)
	ctx := context.Background()
	verify := func(k signingKey) error {
		_, err := o.Verify(ctx, sign(t, k, claims(iss.URL, "alice", "memory:write", clock.Now(), nil)))
		return err
	}
	if err := verify(k1); err != nil || iss.fetches.Load() != 1 {
		t.Fatalf("k1: %v after %d fetches", err, iss.fetches.Load())
	}
	clock.add(mcpserver.DefaultKeyRefresh) // the first fetch is old enough to fetch again
	iss.publish(k1, k2)                    // the issuer rotates: k2 is new
	if err := verify(k2); err != nil || iss.fetches.Load() != 2 {
		t.Fatalf("k2 after the rotation: %v after %d fetches, want nil after 2", err, iss.fetches.Load())
	}
	unknown := newKey(t, "k3")
	for range 5 { // within KeyRefresh of the last fetch: refused without fetching
		if err := verify(unknown); !errors.Is(err, mcpserver.ErrTokenRefused) {
			t.Fatalf("k3: %v", err)
		}
	}
	if n := iss.fetches.Load(); n != 2 {
		t.Errorf("%d fetches after 5 unknown keys within KeyRefresh, want 2", n)
	}
	clock.add(mcpserver.DefaultKeyRefresh)
	if err := verify(unknown); err == nil || iss.fetches.Load() != 3 { // fetched once more, still unknown
		t.Errorf("k3 after KeyRefresh: %v after %d fetches, want refused after 3", err, iss.fetches.Load())
	}
	iss.publish(k2) // k1 retired: the cached keys still hold it until KeyMaxAge
	if err := verify(k1); err != nil {
		t.Errorf("k1 before KeyMaxAge: %v", err)
	}
	clock.add(mcpserver.DefaultKeyMaxAge)
	if err := verify(k1); err == nil {
		t.Errorf("k1 after KeyMaxAge, retired: accepted")
	}
	if err := verify(k2); err != nil {
		t.Errorf("k2 after KeyMaxAge: %v", err)
	}
}

// TestOAuthMetadata: the protected resource metadata at both well-known
// paths, and no metadata without OAuth.
func TestOAuthMetadata(t *testing.T) {
	iss := newFakeIssuer(t)
	iss.publish(newKey(t, "k1"))
	_, ts, _ := oauthServer(t, iss, &oauthClock{now: time.Now()}, nil)
	want := `{"resource":"https://mem.example.com/mcp","authorization_servers":["` + iss.URL + `"],"scopes_supported":["memory:read","memory:write"],"bearer_methods_supported":["header"],"resource_name":"cloudmem"}` + "\n"
	for _, path := range []string{mcpserver.ResourceMetadataPath, mcpserver.ResourceMetadataPath + mcpserver.MCPPath} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: %d %s %q, want 200 %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), b, want)
		}
	}
	plain, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	plain.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, mcpserver.ResourceMetadataPath, nil))
	if rec.Code != 404 {
		t.Errorf("metadata without OAuth: %d, want 404", rec.Code)
	}
}

// TestOAuthConfig: options and issuers NewOAuth refuses.
func TestOAuthConfig(t *testing.T) {
	iss := newFakeIssuer(t)
	iss.publish(newKey(t, "k1"))
	ctx := context.Background()
	cases := []struct {
		name string
		opts mcpserver.OAuthOptions
		want string
	}{
		{"plain http beyond loopback", mcpserver.OAuthOptions{Issuer: "http://idp.example.com", Audience: audience},
			`mcpserver: bad OAuth configuration: the issuer: "http://idp.example.com" is neither https nor http on a loopback address`},
		{"relative audience", mcpserver.OAuthOptions{Issuer: iss.URL, Audience: "mcp"},
			`mcpserver: bad OAuth configuration: the audience "mcp" is not an absolute URL without query or fragment`},
		{"bad claim", mcpserver.OAuthOptions{Issuer: iss.URL, Audience: audience, TenantClaim: "a b"},
			`mcpserver: bad OAuth configuration: the tenant claim "a b" is not a claim name`},
		{"another issuer's metadata", mcpserver.OAuthOptions{Issuer: iss.URL + "/", Audience: audience},
			`mcpserver: bad OAuth configuration: ` + iss.URL + `/.well-known/openid-configuration names the issuer "` + iss.URL + `", not "` + iss.URL + `/"`},
	}
	for _, c := range cases {
		if _, err := mcpserver.NewOAuth(ctx, c.opts); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
	}
	o, err := mcpserver.NewOAuth(ctx, mcpserver.OAuthOptions{Issuer: iss.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), OAuth: o, Tokens: teamTokens(t)}); err == nil {
		t.Error("NewHTTP took tokens and OAuth together")
	}
}

// TestClaimTenants: the tenant file's rules.
func TestClaimTenants(t *testing.T) {
	for file, want := range map[string]string{
		`{"tenants": [{"name": "a", "prefix": "a"}]}`:                                         `mcpserver: bad tokens: tenant 1 ("a") has no claim`,
		`{"tenants": [{"claim": "x", "name": "a"}, {"claim": "x", "name": "b"}]}`:             `mcpserver: bad tokens: tenant 2 ("b"): the claim appears twice`,
		`{"tenants": [{"claim": "x", "name": "a"}, {"claim": "y", "name": "a"}]}`:             `mcpserver: bad tokens: tenant 2 ("a"): the name appears twice`,
		`{"tenants": [{"claim": "*", "name": "a"}]}`:                                          `mcpserver: bad tokens: tenant 1: the "*" tenant takes its name from the claim; it has none of its own`,
		`{"tenants": [{"claim": "*", "prefix": "../{claim}"}]}`:                               `mcpserver: bad tokens: tenant 1 ("*"): prefix "../any" is not a valid store directory`,
		`{"tenants": [{"claim": "x", "name": "a", "token": "0123456789abcdef0123"}]}`:         `mcpserver: bad tokens: the tenant file is not valid: json: unknown field "token"`,
		`{"tenants": [{"claim": "*", "prefix": "u/{claim}"}, {"claim": "*", "prefix": "v"}]}`: `mcpserver: bad tokens: tenant 2: a second "*"`,
	} {
		if _, err := mcpserver.ParseClaimTenants([]byte(file)); err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", file, err, want)
		}
	}
}

// TestClaimTenantsThroughHTTP: a listed subject gets its tenant, another
// the "*" tenant with its prefix, and one whose value cannot be a name (or
// is a listed tenant's name) none.
func TestClaimTenantsThroughHTTP(t *testing.T) {
	iss := newFakeIssuer(t)
	k1 := newKey(t, "k1")
	iss.publish(k1)
	clock := &oauthClock{now: time.Now()}
	tenants, err := mcpserver.ParseClaimTenants([]byte(`{"tenants": [
		{"claim": "0001", "name": "alice", "prefix": "team/alice"},
		{"claim": "*", "prefix": "users/{claim}"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, ts, store := oauthServer(t, iss, clock, tenants)
	ctx := context.Background()
	for _, sub := range []string{"0001", "bob"} {
		cs := connectHTTP(t, ts.URL, sign(t, k1, claims(iss.URL, sub, "memory:write", clock.Now(), nil)))
		if got := call(ctx, cs, []byte(`{"command":"create","path":"/memories/n.md","file_text":"`+sub+`\n"}`)); got.IsError {
			t.Errorf("%s: %+v", sub, got)
		}
	}
	for _, sub := range []string{"alice", "a/b", "auth0|123"} {
		if got := oauthPost(t, ts.URL, sign(t, k1, claims(iss.URL, sub, "memory:write", clock.Now(), nil))); got.status != 403 {
			t.Errorf("%s: %+v, want 403", sub, got)
		}
	}
	if got, want := contents(snapshot(t, store, "")), map[string]string{"team/alice/n.md": "0001\n", "users/bob/n.md": "bob\n"}; !equalMaps(got, want) {
		t.Errorf("store: %v, want %v", got, want)
	}
}
