package web_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/web"
)

// issuer is an authorization server as the console sees it: its metadata
// and one signing key, on a loopback test server.
type issuer struct {
	*httptest.Server
	key *ecdsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss := &issuer{key: k}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]string{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks"})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	})
	iss.Server = httptest.NewServer(mux)
	t.Cleanup(iss.Close)
	return iss
}

const oauthAudience = "https://mem.example.com/mcp"

// token returns an access token of subject with scopes, valid from now
// for ten minutes.
func (iss *issuer) token(t *testing.T, subject, scopes string, now time.Time) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: iss.key},
		(&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(signer).Claims(map[string]any{
		"iss": iss.URL, "sub": subject, "aud": []string{oauthAudience}, "scope": scopes,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
	}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// oauthClock is a clock a test moves by hand.
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

// TestOAuth logs in with access tokens the MCP server's verifier accepts:
// each sees its tenant's files, a memory:read token no action, and a token
// that expires ends the login with a page that says so.
func TestOAuth(t *testing.T) {
	iss := newIssuer(t)
	clock := &oauthClock{now: time.Now()}
	o, err := mcpserver.NewOAuth(context.Background(), mcpserver.OAuthOptions{
		Issuer: iss.URL, Audience: oauthAudience, Now: clock.Now, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, web.Options{OAuth: o})
	f.create("agent", "/memories/alice/a.md", "one\n")
	f.replace("agent", "/memories/alice/a.md", "one", "two")
	f.create("agent", "/memories/bob/b.md", "bob's\n")
	ids := f.ids("alice/a.md")

	want(t, f.get("/login"), http.StatusOK, `<p class="hint">Your token is an access token of `+iss.URL+` for this memory store (the same as for its MCP server). It is kept in a cookie of this site until you log out or it expires.</p>`)
	// Tokens the verifier refuses are refused with its reason.
	want(t, f.post("/login", url.Values{"token": {"not-a-jwt"}}, nil), http.StatusUnauthorized,
		`<p class="error" role="alert">That token was refused: the token is not a JWT signed with an allowed algorithm. Paste a current access token for this memory store.</p>`)
	want(t, f.post("/login", url.Values{"token": {iss.token(t, "alice", "profile", clock.Now())}}, nil), http.StatusUnauthorized,
		`<p class="error" role="alert">That token was refused: the token has neither the memory:read nor the memory:write scope. Paste a current access token for this memory store.</p>`)
	want(t, f.post("/login", url.Values{"token": {iss.token(t, "alice", "memory:write", clock.Now().Add(-time.Hour))}}, nil), http.StatusUnauthorized,
		`<p class="error" role="alert">That token was refused: the token has expired. Paste a current access token for this memory store.</p>`)

	// alice, with memory:write, sees her files and the actions.
	aliceToken := iss.token(t, "alice", "memory:read memory:write", clock.Now())
	alice := f.login(aliceToken)
	// The cookie holds the JWT as itself (no base64 to grow it past a
	// browser's 4 KiB).
	if alice.Value != aliceToken {
		t.Errorf("the cookie holds %q, want the token", alice.Value)
	}
	w := f.get("/tree", alice)
	want(t, w, http.StatusOK, `<span class="who">alice</span>`,
		`<tr class="file"><td><a href="/file?path=%2fmemories%2fa.md">a.md</a></td><td>4 bytes</td>`)
	refuse(t, w, "b.md")
	w = f.get("/history?path=/memories/a.md", alice)
	want(t, w, http.StatusOK, `<a href="/restore?path=%2fmemories%2fa.md&amp;version=`+ids[0]+`">Restore</a>`)
	csrf := csrfOf(t, w.Body.String())
	want(t, f.post("/restore", url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}, "csrf": {csrf}}, nil, alice), http.StatusOK)
	vs, _ := f.hs.History(context.Background(), "alice/a.md")
	if v := vs[len(vs)-1]; v.Actor != "alice" || v.RestoredFrom != ids[0] {
		t.Errorf("alice's restore: %+v", v)
	}

	// alice with memory:read only: read-only, no action, and a POST with
	// her session's own CSRF token changes nothing.
	reader := f.login(iss.token(t, "alice", "memory:read", clock.Now()))
	w = f.get("/history?path=/memories/a.md", reader)
	want(t, w, http.StatusOK, `<span class="who">alice · read-only</span>`)
	refuse(t, w, "/restore?", "/redact?")
	before := f.ids("alice/a.md")
	want(t, f.post("/restore", url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}, "csrf": {csrfOf(t, w.Body.String())}}, nil, reader),
		http.StatusForbidden, `<p class="error" role="alert">You can read this store but not change it, so nothing was changed.</p>`)
	if got := f.ids("alice/a.md"); len(got) != len(before) {
		t.Errorf("a read-only token's restore wrote: %v", got)
	}
	// The write token's session is still writable (scopes are per token).
	want(t, f.get("/history?path=/memories/a.md", alice), http.StatusOK, `<span class="who">alice</span>`)

	// The tokens expire (after the verifier's leeway): the next page logs
	// out and says why; a POST is refused the same way.
	clock.add(10*time.Minute + mcpserver.DefaultLeeway + time.Second)
	w = f.get("/tree", alice)
	want(t, w, http.StatusUnauthorized, `<p class="error" role="alert">Your login has ended: the token has expired. Log in again with a new token.</p>
<h1>Log in</h1>`)
	if cs := w.Result().Cookies(); len(cs) != 1 || cs[0].Name != web.CookieName || cs[0].MaxAge >= 0 {
		t.Errorf("an expired login's cookie is not cleared: %+v", cs)
	}
	want(t, f.post("/restore", url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}, "csrf": {csrf}}, nil, alice),
		http.StatusForbidden, `<p class="error" role="alert">Your login has ended: the token has expired. Log in again with a new token.</p>`)
	if got := f.ids("alice/a.md"); len(got) != len(before) {
		t.Errorf("an expired token's restore wrote: %v", got)
	}

	// OAuth serves beyond loopback; it does not go with tokens.
	if err := f.srv.CheckAddr(&net.TCPAddr{IP: net.IPv4zero, Port: 80}); err != nil {
		t.Error(err)
	}
	if _, err := web.New(web.Options{History: f.hs, OAuth: o, Tokens: tokens(t)}); err == nil || err.Error() != "web: Options takes Tokens or OAuth, not both" {
		t.Errorf("tokens and OAuth: %v", err)
	}
}
