package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The scopes of an OAuth access token (docs/spec.md "OAuth over HTTP"): a
// token needs one of them; without ScopeWrite its tenant is read-only.
const (
	ScopeRead  = "memory:read"
	ScopeWrite = "memory:write"
)

// The well-known path of the protected resource metadata (RFC 9728).
const ResourceMetadataPath = "/.well-known/oauth-protected-resource"

// Defaults of OAuthOptions.
const (
	DefaultTenantClaim = "sub"
	// DefaultLeeway is the clock skew allowed on a token's exp, nbf and iat.
	DefaultLeeway = time.Minute
	// DefaultKeyRefresh is the least time between two fetches of the
	// issuer's keys for a token signed with a key id it does not know, so
	// that tokens with made-up key ids cannot make the server hammer the
	// authorization server.
	DefaultKeyRefresh = 30 * time.Second
	// DefaultKeyMaxAge is how long fetched keys are used before they are
	// fetched again.
	DefaultKeyMaxAge = time.Hour
	// maxMetadataBytes caps the issuer's metadata and key set documents.
	maxMetadataBytes = 1 << 20
	fetchTimeout     = 10 * time.Second
)

// allowedAlgorithms are the signature algorithms an access token may use:
// asymmetric ones only (never "none", never HMAC, whose key would be the
// issuer's public key).
var allowedAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
}

// ErrBadOAuth is the error of an OAuth configuration that NewOAuth refuses
// (options, the issuer's metadata, its keys).
var ErrBadOAuth = errors.New("mcpserver: bad OAuth configuration")

// ErrIssuer is the error of NewOAuth when the issuer's metadata or keys
// cannot be fetched; the message says why.
var ErrIssuer = errors.New("mcpserver: the OAuth issuer does not answer")

// ErrTokenRefused is the error of a bearer token Verify refuses; it is a
// *TokenError.
var ErrTokenRefused = errors.New("mcpserver: token refused")

// TokenError is why Verify refused a token. Description is the text of the
// refusal (docs/spec.md "OAuth over HTTP"), safe to show the client: it
// never holds the token or a claim's value.
type TokenError struct {
	// Code is the OAuth error code (RFC 6750): "invalid_token" (HTTP 401)
	// or "insufficient_scope" (HTTP 403).
	Code        string
	Description string
}

func (e *TokenError) Error() string { return "mcpserver: token refused: " + e.Description }

// Is makes errors.Is(err, ErrTokenRefused) hold.
func (e *TokenError) Is(target error) bool { return target == ErrTokenRefused }

// Status is the HTTP status of the refusal.
func (e *TokenError) Status() int {
	if e.Code == "insufficient_scope" {
		return http.StatusForbidden
	}
	return http.StatusUnauthorized
}

func invalidToken(desc string) *TokenError {
	return &TokenError{Code: "invalid_token", Description: desc}
}

// OAuthOptions configures an OAuth resource server.
type OAuthOptions struct {
	// Issuer is the authorization server's issuer identifier, exactly as
	// its tokens' iss claim has it. Its metadata is discovered at
	// Issuer/.well-known/oauth-authorization-server (RFC 8414), else
	// Issuer/.well-known/openid-configuration. It must be https, or http
	// on a loopback address.
	Issuer string
	// Audience is the server's canonical resource URI (RFC 8707), which
	// every token's aud claim must hold: the URL clients reach MCPPath at,
	// say https://mem.example.com/mcp.
	Audience string
	// TenantClaim is the claim that names the token's tenant; "" means
	// DefaultTenantClaim (sub).
	TenantClaim string
	// Tenants maps the claim's values to tenants. Nil means every value is
	// a tenant of its own, named by it, whose prefix is the value.
	Tenants *ClaimTenants
	// Client fetches the issuer's metadata and keys; nil means a client
	// with a 10 s timeout.
	Client *http.Client
	// Leeway, KeyRefresh and KeyMaxAge: 0 means DefaultLeeway,
	// DefaultKeyRefresh and DefaultKeyMaxAge.
	Leeway     time.Duration
	KeyRefresh time.Duration
	KeyMaxAge  time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives why key fetches failed; nil means slog.Default().
	Logger *slog.Logger
}

// OAuth is an OAuth 2.1 resource server's token check: it accepts signed
// JWT access tokens of one issuer for one audience, and maps them to
// tenants. It is safe for concurrent use.
type OAuth struct {
	opts    OAuthOptions
	jwksURI string
	meta    *oauthex.ProtectedResourceMetadata
	metaURL string

	mu      sync.Mutex // held across a fetch, so that concurrent misses fetch once
	keys    jose.JSONWebKeySet
	fetched time.Time // the last fetch's start, successful or not
}

var claimName = regexp.MustCompile(`^[A-Za-z0-9_.:/-]{1,64}$`)

// NewOAuth checks opts, discovers the issuer's metadata and fetches its
// keys. Errors wrap ErrBadOAuth or ErrIssuer.
func NewOAuth(ctx context.Context, opts OAuthOptions) (*OAuth, error) {
	if opts.TenantClaim == "" {
		opts.TenantClaim = DefaultTenantClaim
	}
	if !claimName.MatchString(opts.TenantClaim) {
		return nil, fmt.Errorf("%w: the tenant claim %q is not a claim name", ErrBadOAuth, opts.TenantClaim)
	}
	if opts.Leeway <= 0 {
		opts.Leeway = DefaultLeeway
	}
	if opts.KeyRefresh <= 0 {
		opts.KeyRefresh = DefaultKeyRefresh
	}
	if opts.KeyMaxAge <= 0 {
		opts.KeyMaxAge = DefaultKeyMaxAge
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: fetchTimeout}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := checkSecureURL(opts.Issuer); err != nil {
		return nil, fmt.Errorf("%w: the issuer: %w", ErrBadOAuth, err)
	}
	aud, err := url.Parse(opts.Audience)
	if err != nil || !aud.IsAbs() || aud.Host == "" || aud.Fragment != "" || aud.RawQuery != "" {
		return nil, fmt.Errorf("%w: the audience %q is not an absolute URL without query or fragment", ErrBadOAuth, opts.Audience)
	}
	o := &OAuth{opts: opts}
	o.metaURL = aud.Scheme + "://" + aud.Host + ResourceMetadataPath + strings.TrimSuffix(aud.EscapedPath(), "/")
	o.meta = &oauthex.ProtectedResourceMetadata{
		Resource:               opts.Audience,
		AuthorizationServers:   []string{opts.Issuer},
		ScopesSupported:        []string{ScopeRead, ScopeWrite},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "cloudmem",
	}
	if o.jwksURI, err = o.discover(ctx); err != nil {
		return nil, err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.fetchKeys(ctx); err != nil {
		return nil, err
	}
	return o, nil
}

// checkSecureURL accepts an absolute https URL, or http on loopback.
func checkSecureURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			return nil
		}
	}
	return fmt.Errorf("%q is neither https nor http on a loopback address", raw)
}

// discover reads the issuer's metadata and returns its jwks_uri.
func (o *OAuth) discover(ctx context.Context) (string, error) {
	iss, _ := url.Parse(o.opts.Issuer)
	candidates := []string{
		// RFC 8414: the well-known path goes between the host and the issuer's path.
		iss.Scheme + "://" + iss.Host + "/.well-known/oauth-authorization-server" + strings.TrimSuffix(iss.EscapedPath(), "/"),
		// OpenID Connect Discovery: appended to the issuer.
		strings.TrimSuffix(o.opts.Issuer, "/") + "/.well-known/openid-configuration",
	}
	var errs []string
	for _, u := range candidates {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := o.getJSON(ctx, u, &meta); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		if meta.Issuer != o.opts.Issuer {
			return "", fmt.Errorf("%w: %s names the issuer %q, not %q", ErrBadOAuth, u, meta.Issuer, o.opts.Issuer)
		}
		if err := checkSecureURL(meta.JWKSURI); err != nil {
			return "", fmt.Errorf("%w: %s: jwks_uri: %w", ErrBadOAuth, u, err)
		}
		return meta.JWKSURI, nil
	}
	// %v: a network error here is the issuer's, not the store's (which is
	// how callers describe network errors).
	return "", fmt.Errorf("%w: its metadata: %s", ErrIssuer, strings.Join(errs, "; "))
}

// getJSON fetches u and decodes its JSON body into v.
func (o *OAuth) getJSON(ctx context.Context, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := o.opts.Client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", u, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	if len(data) > maxMetadataBytes {
		return fmt.Errorf("GET %s: the document is larger than %d bytes", u, maxMetadataBytes)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}

// fetchKeys fetches the issuer's key set. o.mu is held.
func (o *OAuth) fetchKeys(ctx context.Context) error {
	o.fetched = o.opts.Now()
	var set jose.JSONWebKeySet
	if err := o.getJSON(ctx, o.jwksURI, &set); err != nil {
		return fmt.Errorf("%w: its keys: %v", ErrIssuer, err)
	}
	o.keys = set
	return nil
}

// key returns the issuer's public key with id kid for alg, fetching the keys
// again when kid is unknown (at most once per KeyRefresh) or the keys are
// older than KeyMaxAge.
func (o *OAuth) key(ctx context.Context, kid string, alg string) (any, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.opts.Now()
	if now.Sub(o.fetched) >= o.opts.KeyMaxAge {
		if err := o.fetchKeys(ctx); err != nil {
			o.opts.Logger.Warn("mcpserver: refreshing the issuer's keys", "err", err)
		}
	}
	if k, ok := o.find(kid, alg); ok {
		return k, true
	}
	if now.Sub(o.fetched) < o.opts.KeyRefresh {
		return nil, false
	}
	if err := o.fetchKeys(ctx); err != nil {
		o.opts.Logger.Warn("mcpserver: fetching the issuer's keys for an unknown key id", "err", err)
		return nil, false
	}
	return o.find(kid, alg)
}

// find looks kid up among the keys fetched: a public signing key whose
// algorithm, if it names one, is alg. A token without a kid matches when
// exactly one key fits. o.mu is held.
func (o *OAuth) find(kid, alg string) (any, bool) {
	var found []any
	for _, k := range o.keys.Keys {
		if (kid != "" && k.KeyID != kid) || !k.Valid() || !k.IsPublic() ||
			(k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) {
			continue
		}
		found = append(found, k.Key)
	}
	if len(found) != 1 {
		return nil, false
	}
	return found[0], true
}

// Metadata is the protected resource metadata (RFC 9728) OAuth publishes.
func (o *OAuth) Metadata() *oauthex.ProtectedResourceMetadata { return o.meta }

// MetadataURL is where the metadata is, named in every 401's
// WWW-Authenticate header: the audience's origin, ResourceMetadataPath,
// then the audience's path.
func (o *OAuth) MetadataURL() string { return o.metaURL }

// Grant is what a token Verify accepted allows.
type Grant struct {
	// Tenant is the token's tenant; ReadOnly is set when the tenant is, or
	// the token lacks ScopeWrite.
	Tenant *Tenant
	// Scopes are the token's scopes; Expiry its exp.
	Scopes []string
	Expiry time.Time
}

// accessClaims are the claims Verify reads besides the registered ones.
type accessClaims struct {
	Scope string          `json:"scope"` // RFC 9068, space-separated
	Scp   json.RawMessage `json:"scp"`   // Hydra (a list), Entra ID (space-separated)
}

// Verify checks token and returns its grant. Errors are *TokenError, whose
// Description is the text of docs/spec.md "OAuth over HTTP".
func (o *OAuth) Verify(ctx context.Context, token string) (*Grant, error) {
	tok, err := jwt.ParseSigned(token, allowedAlgorithms)
	if err != nil || len(tok.Headers) != 1 {
		return nil, invalidToken("the token is not a JWT signed with an allowed algorithm")
	}
	h := tok.Headers[0]
	key, ok := o.key(ctx, h.KeyID, h.Algorithm)
	if !ok {
		return nil, invalidToken("the token is not signed with a key of the issuer")
	}
	var (
		std   jwt.Claims
		extra accessClaims
		all   map[string]any
	)
	if err := tok.Claims(key, &std, &extra, &all); err != nil {
		return nil, invalidToken("the token's signature does not verify")
	}
	switch {
	case std.Issuer != o.opts.Issuer:
		return nil, invalidToken("the token is from another issuer")
	case !std.Audience.Contains(o.opts.Audience):
		return nil, invalidToken("the token is for another audience")
	case std.Expiry == nil:
		return nil, invalidToken("the token has no expiry")
	}
	now := o.opts.Now()
	switch err := std.ValidateWithLeeway(jwt.Expected{Time: now}, o.opts.Leeway); {
	case errors.Is(err, jwt.ErrExpired):
		return nil, invalidToken("the token has expired")
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, invalidToken("the token is not valid yet")
	case err != nil:
		return nil, invalidToken("the token's claims are not valid")
	}
	value, _ := all[o.opts.TenantClaim].(string)
	if value == "" {
		return nil, invalidToken("the token has no " + o.opts.TenantClaim + " claim")
	}
	scopes := tokenScopes(extra)
	write := slices.Contains(scopes, ScopeWrite)
	if !write && !slices.Contains(scopes, ScopeRead) {
		return nil, &TokenError{Code: "insufficient_scope", Description: "the token has neither the memory:read nor the memory:write scope"}
	}
	t, ok := o.opts.Tenants.lookup(value)
	if !ok {
		return nil, &TokenError{Code: "insufficient_scope", Description: "the token's " + o.opts.TenantClaim + " has no tenant on this server"}
	}
	if !write && !t.ReadOnly {
		ro := *t
		ro.ReadOnly = true
		t = &ro
	}
	return &Grant{Tenant: t, Scopes: scopes, Expiry: std.Expiry.Time()}, nil
}

// tokenScopes reads the scope claim (a space-separated string) or the scp
// claim (a list, or a space-separated string).
func tokenScopes(c accessClaims) []string {
	scopes := strings.Fields(c.Scope)
	var list []string
	var s string
	switch {
	case json.Unmarshal(c.Scp, &list) == nil:
		scopes = append(scopes, list...)
	case json.Unmarshal(c.Scp, &s) == nil:
		scopes = append(scopes, strings.Fields(s)...)
	}
	return scopes
}

// ClaimTenants maps the values of a token's tenant claim to tenants, by the
// tenant rules of the token file (names, prefixes, mounts, read-only). A nil
// *ClaimTenants maps every value to a tenant of its own: its name and prefix
// are the value. A ClaimTenants is safe for concurrent lookups.
type ClaimTenants struct {
	byClaim map[string]*Tenant
	names   map[string]bool // the listed tenants' names
	// other is the tenant of every value not listed, with "{claim}" in its
	// prefixes standing for the value; nil refuses them.
	other *Tenant
}

// claimTenantFile is the OAuth tenant file's format.
type claimTenantFile struct {
	Tenants []struct {
		Tenant
		// Claim is the value of the token's tenant claim; "*" stands for
		// every value not listed.
		Claim string `json:"claim"`
	} `json:"tenants"`
}

// ParseClaimTenants reads an OAuth tenant file: the token file's format
// with a claim value in place of each token:
//
//	{"tenants": [
//	  {"claim": "4f9a...", "name": "alice", "prefix": "team/alice"},
//	  {"claim": "*", "prefix": "users/{claim}"}
//	]}
//
// An entry whose claim is "*" is the tenant of every other value: its name
// is the value, and "{claim}" in its prefix and its mounts' prefixes stands
// for the value. Without it, other values are refused. Errors wrap
// ErrBadTokens.
func ParseClaimTenants(data []byte) (*ClaimTenants, error) {
	var f claimTenantFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%w: the tenant file is not valid: %w", ErrBadTokens, err)
	}
	ct := &ClaimTenants{byClaim: map[string]*Tenant{}, names: map[string]bool{}}
	names := ct.names
	for i, e := range f.Tenants {
		t := e.Tenant
		switch {
		case e.Claim == "":
			return nil, fmt.Errorf("%w: tenant %d (%q) has no claim", ErrBadTokens, i+1, t.Name)
		case e.Claim == "*":
			if ct.other != nil {
				return nil, fmt.Errorf("%w: tenant %d: a second \"*\"", ErrBadTokens, i+1)
			}
			if t.Name != "" {
				return nil, fmt.Errorf("%w: tenant %d: the \"*\" tenant takes its name from the claim; it has none of its own", ErrBadTokens, i+1)
			}
			t.Name = "any"
			if err := checkTenant(expand(t, "any")); err != nil {
				return nil, fmt.Errorf("%w: tenant %d (\"*\"): %w", ErrBadTokens, i+1, err)
			}
			if err := loadTenant(&t); err != nil {
				return nil, fmt.Errorf("%w: tenant %d (\"*\"): %w", ErrBadTokens, i+1, err)
			}
			t.Name = ""
			ct.other = &t
			continue
		case ct.byClaim[e.Claim] != nil:
			return nil, fmt.Errorf("%w: tenant %d (%q): the claim appears twice", ErrBadTokens, i+1, t.Name)
		case names[t.Name]:
			return nil, fmt.Errorf("%w: tenant %d (%q): the name appears twice", ErrBadTokens, i+1, t.Name)
		}
		if err := checkTenant(t); err != nil {
			return nil, fmt.Errorf("%w: tenant %d (%q): %w", ErrBadTokens, i+1, t.Name, err)
		}
		if err := loadTenant(&t); err != nil {
			return nil, fmt.Errorf("%w: tenant %d (%q): %w", ErrBadTokens, i+1, t.Name, err)
		}
		names[t.Name] = true
		ct.byClaim[e.Claim] = &t
	}
	return ct, nil
}

// expand returns the "*" tenant t for the claim value v.
func expand(t Tenant, v string) Tenant {
	t.Name = v
	t.Prefix = strings.ReplaceAll(t.Prefix, "{claim}", v)
	if len(t.Mounts) > 0 {
		mounts := make([]TenantMount, len(t.Mounts))
		for i, m := range t.Mounts {
			m.Prefix = strings.ReplaceAll(m.Prefix, "{claim}", v)
			mounts[i] = m
		}
		t.Mounts = mounts
	}
	return t
}

// lookup returns the tenant of the claim value v.
func (ct *ClaimTenants) lookup(v string) (*Tenant, bool) {
	if ct != nil {
		if t := ct.byClaim[v]; t != nil {
			return t, true
		}
	}
	other := &Tenant{Prefix: "{claim}"}
	if ct != nil {
		other = ct.other
	}
	if other == nil {
		return nil, false
	}
	// The value becomes a name and a path: only a valid name does, and
	// never a listed tenant's name (which is another tenant).
	t := expand(*other, v)
	if checkTenant(t) != nil || (ct != nil && ct.names[t.Name]) {
		return nil, false
	}
	return &t, true
}

type grantKey struct{}

// requireOAuth lets through requests whose bearer token o verifies, with
// the grant in their context; the others get 401 or 403 with the
// WWW-Authenticate header of RFC 6750 and RFC 9728 (docs/spec.md "OAuth
// over HTTP").
func (h *HTTP) requireOAuth(next http.Handler) http.Handler {
	o := h.opts.OAuth
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fields := strings.Fields(r.Header.Get("Authorization"))
		if len(fields) != 2 || !strings.EqualFold(fields[0], "bearer") {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s", scope="%s %s"`, o.MetadataURL(), ScopeRead, ScopeWrite))
			http.Error(w, "no bearer token", http.StatusUnauthorized)
			return
		}
		g, err := o.Verify(r.Context(), fields[1])
		var te *TokenError
		if errors.As(err, &te) {
			challenge := fmt.Sprintf(`Bearer error="%s", error_description="%s", resource_metadata="%s"`, te.Code, te.Description, o.MetadataURL())
			if te.Code == "insufficient_scope" {
				challenge += fmt.Sprintf(`, scope="%s %s"`, ScopeRead, ScopeWrite)
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, te.Description, te.Status())
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grantKey{}, g)))
	})
}

// granted is the SDK's token check behind requireOAuth: it hands on the
// grant requireOAuth put in the context.
func granted(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
	g, ok := ctx.Value(grantKey{}).(*Grant)
	if !ok { // not reached: requireOAuth comes first
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: tenantKey(g.Tenant), Scopes: g.Scopes, Expiration: g.Expiry, Extra: map[string]any{"tenant": g.Tenant}}, nil
}
