package mcpserver

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/search"
)

// The paths HTTP serves.
const (
	MCPPath    = "/mcp"     // the streamable HTTP endpoint
	HealthPath = "/healthz" // 200 "ok" while serving, 503 while shutting down; no token needed
)

// Defaults of HTTPOptions.
const (
	DefaultMaxRequestBytes = 2 << 20 // a 100,000-byte file, escaped, fits several times over
	DefaultSessionTimeout  = 30 * time.Minute
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultMaxSessions caps the open sessions of a server (each is held
	// until its client ends it or it is idle for the session timeout).
	DefaultMaxSessions = 1000
	// DefaultMaxTenantSessions caps the open sessions of one tenant.
	DefaultMaxTenantSessions = 100
	// bodyTimeout bounds reading one request body, against clients that
	// send it slowly.
	bodyTimeout = 30 * time.Second
	// headerTimeout bounds reading a request's headers.
	headerTimeout = 10 * time.Second
)

// ErrNoAuth is the error of Serve on an address other than loopback with no
// tokens: anyone who reaches the port could read and change the memory.
var ErrNoAuth = errors.New("mcpserver: serving beyond loopback needs bearer tokens")

// HTTPOptions configures an HTTP.
type HTTPOptions struct {
	// Store is the server's store. Each tenant sees its part of it (see
	// TenantHandler). It may be nil when Open is set.
	Store blob.Store
	// Memory configures every tenant's handler; a read-only tenant's is
	// read-only whatever it says.
	Memory memory.Options
	// Open, if set, returns the handler of tenant t (nil when the server
	// has no tokens) instead of TenantHandler(Store, t, Memory). It is the
	// one place that decides what a tenant's memory is; it is called once
	// per tenant, again only after it failed.
	Open func(ctx context.Context, t *Tenant) (*memory.Handler, error)
	// Search, if set and Open is not, gives each tenant the memory_search
	// tool over its own tree (see TenantSearch), with these options.
	Search *search.Options
	// Tokens are the bearer tokens and their tenants. With none (and no
	// OAuth), the server needs no token, serves the whole store as one
	// tenant, and Serve refuses any address but loopback.
	Tokens *Tokens
	// OAuth, if set, makes the server an OAuth 2.1 resource server: it
	// accepts the JWT access tokens OAuth verifies (and no Tokens), and
	// publishes its protected resource metadata at ResourceMetadataPath.
	OAuth *OAuth
	// Actor is the actor of the commands when there are no tokens (a
	// tenant's commands have its name).
	Actor string
	// MaxRequestBytes caps a request body: a larger one gets 413 and
	// reaches no handler. 0 means DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// CommandTimeout bounds one command (see Options).
	CommandTimeout time.Duration
	// SessionTimeout closes a session idle this long. 0 means
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// ShutdownTimeout bounds a graceful shutdown. 0 means
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// MaxSessions caps the sessions open at once, of all tenants: a
	// request that would open one more gets HTTP 503 with a JSON-RPC error
	// (docs/spec.md "Sessions over HTTP"). 0 means DefaultMaxSessions;
	// negative means no cap.
	MaxSessions int
	// MaxTenantSessions caps the sessions open at once of one tenant (of
	// the whole store without tokens): over it, HTTP 429. 0 means
	// DefaultMaxTenantSessions; negative means no cap.
	MaxTenantSessions int
	// MaxInFlight caps the requests (POSTs) served at once, of all
	// tenants: over it, HTTP 503 with a JSON-RPC error (docs/spec.md
	// "Sessions over HTTP"). 0 means DefaultMaxInFlight; negative means no
	// cap.
	MaxInFlight int
	// MaxTenantInFlight caps the requests served at once of one tenant:
	// over it, HTTP 429. 0 means DefaultMaxTenantInFlight; negative means no
	// cap.
	MaxTenantInFlight int
	// Stateless serves every request on its own, with nothing kept between
	// requests (go-sdk's StreamableHTTPOptions.Stateless): protocol
	// 2026-07-28 as it is meant, and older protocols without a session id
	// (each request after initialize runs as if just initialized). Any
	// replica behind a load balancer then answers any request, with no
	// session affinity. There are no sessions to cap (MaxSessions and
	// MaxTenantSessions do not apply), no event stream (GET and DELETE get
	// 405), and no resource subscriptions.
	Stateless bool
	// Version is reported to clients (see Options).
	Version string
	// Logger receives the server's log. Nil means slog.Default().
	Logger *slog.Logger
	// Fallback, if set, serves the requests for every path other than
	// MCPPath, HealthPath, ReadyPath and, with OAuth, its metadata (say the
	// web console, package web, so that one service serves both), instead
	// of 404. It does its own authentication.
	Fallback http.Handler
}

// HTTP is an http.Handler serving MCP over streamable HTTP at MCPPath and
// a health check at HealthPath, and Serve runs it on a listener. Each tenant
// has its own Server, created at its first request; a session belongs to the
// tenant that opened it, and a request with another tenant's token is
// refused (403). HTTP is safe for concurrent use.
type HTTP struct {
	opts HTTPOptions
	mcp  http.Handler // the SDK's handler, behind authentication

	resourceMetadata http.Handler // with OAuth: its protected resource metadata

	mu       sync.Mutex
	tenants  map[string]*tenantServer // by tenant name; "" without tokens
	draining bool                     // shutting down: refuse new requests
	active   int                      // MCP requests (not event streams) in flight
	idle     []chan struct{}          // closed when active drops to 0

	smu      sync.Mutex
	sessions map[string]*tenantSessions // by tenant name
	open     int                        // sessions and reservations, all tenants

	fmu            sync.Mutex
	inFlight       int            // requests admitted, all tenants
	tenantInFlight map[string]int // by tenant name
}

// tenantSessions counts the sessions of one tenant: those opened (by id)
// and the requests in flight that may open one.
type tenantSessions struct {
	srv     *Server
	ids     map[string]struct{}
	pending int
}

type tenantServer struct {
	mu  sync.Mutex
	srv *Server // nil until opened
}

type serverKey struct{}

// NewHTTP returns an HTTP serving opts.
func NewHTTP(opts HTTPOptions) (*HTTP, error) {
	if opts.Store == nil && opts.Open == nil {
		return nil, errors.New("mcpserver: HTTPOptions needs a Store or an Open function")
	}
	if opts.OAuth != nil && opts.Tokens.Len() > 0 {
		return nil, errors.New("mcpserver: HTTPOptions takes tokens or OAuth, not both")
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = DefaultSessionTimeout
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = DefaultCommandTimeout
	}
	if opts.MaxSessions == 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxTenantSessions == 0 {
		opts.MaxTenantSessions = DefaultMaxTenantSessions
	}
	if opts.MaxInFlight == 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.MaxTenantInFlight == 0 {
		opts.MaxTenantInFlight = DefaultMaxTenantInFlight
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	h := &HTTP{opts: opts, tenants: map[string]*tenantServer{}, sessions: map[string]*tenantSessions{}, tenantInFlight: map[string]int{}}
	if opts.OAuth != nil {
		h.resourceMetadata = auth.ProtectedResourceMetadataHandler(opts.OAuth.Metadata())
	}
	sdk := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s, ok := r.Context().Value(serverKey{}).(*Server); ok {
			return s.mcp
		}
		return nil
	}, &mcp.StreamableHTTPOptions{
		JSONResponse:        true,
		Stateless:           opts.Stateless,
		Logger:              sdkLogger(opts.Logger),
		SessionTimeout:      opts.SessionTimeout,
		MaxRequestBodyBytes: opts.MaxRequestBytes,
	})
	var inner http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.serveTenant(w, r, sdk)
	})
	switch {
	case opts.OAuth != nil:
		inner = h.requireOAuth(auth.RequireBearerToken(granted, &auth.RequireBearerTokenOptions{ClockSkew: opts.OAuth.opts.Leeway})(inner))
	case opts.Tokens.Len() > 0:
		inner = auth.RequireBearerToken(h.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(inner)
	}
	// Browsers may not drive the server from another origin's page.
	h.mcp = http.NewCrossOriginProtection().Handler(inner)
	return h, nil
}

// verify is the bearer token check: the tenant's name becomes the session's
// user, which the SDK then requires of every request of the session.
func (h *HTTP) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	t, ok := h.opts.Tokens.Lookup(token)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: tenantKey(t), Extra: map[string]any{"tenant": t}}, nil
}

// route routes a request: MCPPath, HealthPath, ReadyPath, with OAuth the
// resource metadata, else HTTPOptions.Fallback or 404.
func (h *HTTP) route(w http.ResponseWriter, r *http.Request) {
	isMetadata := r.URL.Path == ResourceMetadataPath || r.URL.Path == ResourceMetadataPath+MCPPath
	switch {
	case r.URL.Path == HealthPath:
		h.serveHealth(w, r)
	case r.URL.Path == ReadyPath:
		h.serveReady(w, r)
	case isMetadata && h.opts.OAuth != nil:
		h.resourceMetadata.ServeHTTP(w, r)
	case r.URL.Path == MCPPath:
		if r.Method != http.MethodGet { // a GET is the long-lived event stream
			if !h.beginRequest() {
				http.Error(w, "the server is shutting down", http.StatusServiceUnavailable)
				return
			}
			defer h.endRequest()
			// The body must arrive in time (errors: a recorder in tests
			// cannot set deadlines, and needs none).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
		}
		if h.opts.Tokens.Len() > 0 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cloudmem"`) // removed once the token is good
		}
		h.mcp.ServeHTTP(w, r)
	default:
		if h.opts.Fallback != nil {
			h.opts.Fallback.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

func (h *HTTP) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h.mu.Lock()
	draining := h.draining
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if draining {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "shutting down")
		return
	}
	fmt.Fprintln(w, "ok")
}

// serveTenant hands an authenticated request to the SDK with its tenant's
// Server in the context.
func (h *HTTP) serveTenant(w http.ResponseWriter, r *http.Request, sdk http.Handler) {
	w.Header().Del("WWW-Authenticate")
	var t *Tenant
	if info := auth.TokenInfoFromContext(r.Context()); info != nil {
		t, _ = info.Extra["tenant"].(*Tenant)
		if t == nil { // not reached: verify always sets it
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if info, ok := r.Context().Value(requestInfoKey{}).(*requestInfo); ok {
		info.tenant, info.authed = nameOf(t), true
	}
	if r.Method == http.MethodPost {
		if code, msg := h.admit(nameOf(t)); code != 0 {
			w.Header().Set("Retry-After", "1")
			writeRPCError(w, code, msg)
			return
		}
		defer h.release(nameOf(t))
	}
	srv, err := h.tenant(r.Context(), t)
	if err != nil {
		h.opts.Logger.Error("mcpserver: opening a tenant's memory", "tenant", nameOf(t), "err", err)
		http.Error(w, "the memory store is not available", http.StatusServiceUnavailable)
		return
	}
	if !h.opts.Stateless && r.Method == http.MethodPost && r.Header.Get(sessionHeader) == "" { // opens a session
		if code, msg := h.reserve(nameOf(t), srv); code != 0 {
			writeRPCError(w, code, msg)
			return
		}
		defer func() { h.settle(nameOf(t), w.Header().Get(sessionHeader)) }()
	}
	sdk.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverKey{}, srv)))
}

// sessionHeader carries a streamable HTTP session's id.
const sessionHeader = "Mcp-Session-Id"

// reserve takes a place for a session tenant may open, or returns the HTTP
// status and the text of the refusal. Sessions that ended (idle, deleted,
// closed) are forgotten when a cap is reached, by asking the tenants'
// Servers which sessions they still hold.
func (h *HTTP) reserve(tenant string, srv *Server) (int, string) {
	h.smu.Lock()
	defer h.smu.Unlock()
	ts := h.sessions[tenant]
	if ts == nil {
		ts = &tenantSessions{srv: srv, ids: map[string]struct{}{}}
		h.sessions[tenant] = ts
	}
	overTenant := func() bool {
		return h.opts.MaxTenantSessions >= 0 && len(ts.ids)+ts.pending >= h.opts.MaxTenantSessions
	}
	overAll := func() bool { return h.opts.MaxSessions >= 0 && h.open >= h.opts.MaxSessions }
	if overTenant() {
		h.forget(ts)
	}
	if overAll() {
		for _, o := range h.sessions {
			h.forget(o)
		}
	}
	switch {
	case overTenant():
		return http.StatusTooManyRequests, fmt.Sprintf("Too many sessions: this token has %d open sessions, the limit is %d. "+
			"End a session you no longer use (DELETE with its Mcp-Session-Id), or reuse one; an idle session ends after %v.",
			len(ts.ids)+ts.pending, h.opts.MaxTenantSessions, h.opts.SessionTimeout)
	case overAll():
		return http.StatusServiceUnavailable, fmt.Sprintf("Too many sessions: the server has %d open sessions, the limit is %d. "+
			"Try again later; an idle session ends after %v.", h.open, h.opts.MaxSessions, h.opts.SessionTimeout)
	}
	ts.pending++
	h.open++
	return 0, ""
}

// settle turns a reservation into the session id it opened, or gives it
// back when the request opened none ("").
func (h *HTTP) settle(tenant, id string) {
	h.smu.Lock()
	defer h.smu.Unlock()
	ts := h.sessions[tenant]
	ts.pending--
	if _, dup := ts.ids[id]; id == "" || dup {
		h.open--
		return
	}
	ts.ids[id] = struct{}{}
}

// forget drops the sessions ts counts that its Server no longer holds.
// h.smu is held.
func (h *HTTP) forget(ts *tenantSessions) {
	live := make(map[string]bool, len(ts.ids))
	for ss := range ts.srv.mcp.Sessions() {
		live[ss.ID()] = true
	}
	for id := range ts.ids {
		if !live[id] {
			delete(ts.ids, id)
			h.open--
		}
	}
}

// writeRPCError answers a request with status and a JSON-RPC error whose
// message is msg (the request's id is not read: null).
func writeRPCError(w http.ResponseWriter, status int, msg string) {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string   `json:"jsonrpc"`
		ID      *int     `json:"id"`
		Error   rpcError `json:"error"`
	}{"2.0", nil, rpcError{-32000, msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// tenantKey names t's Server and its sessions' user: an OAuth tenant is
// read-only with one token and not with another, and each has its own
// handler.
func tenantKey(t *Tenant) string {
	if t != nil && t.ReadOnly {
		return t.Name + " (read-only)"
	}
	return nameOf(t)
}

func nameOf(t *Tenant) string {
	if t == nil {
		return ""
	}
	return t.Name
}

// tenant returns t's Server, opening its handler at the first request (and
// again after a failure).
func (h *HTTP) tenant(ctx context.Context, t *Tenant) (*Server, error) {
	h.mu.Lock()
	ts := h.tenants[tenantKey(t)]
	if ts == nil {
		ts = &tenantServer{}
		h.tenants[tenantKey(t)] = ts
	}
	h.mu.Unlock()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.srv != nil {
		return ts.srv, nil
	}
	var (
		hd  *memory.Handler
		idx *search.Index
		err error
	)
	switch {
	case h.opts.Open != nil:
		hd, err = h.opts.Open(ctx, t)
	case h.opts.Search != nil:
		hd, idx, err = TenantSearch(h.opts.Store, t, h.opts.Memory, h.opts.Search)
	default:
		hd, err = TenantHandler(h.opts.Store, t, h.opts.Memory)
	}
	if err != nil {
		return nil, err
	}
	actor := h.opts.Actor
	if t != nil {
		actor = t.Name
	}
	ts.srv = New(hd, &Options{Actor: actor, CommandTimeout: h.opts.CommandTimeout, Version: h.opts.Version, Logger: h.opts.Logger, Search: idx})
	return ts.srv, nil
}

// TenantHandler returns the handler of tenant t over store: the keys under
// t.Prefix (blob.Prefix), under t's write policy and limits, with t.Mounts
// placed in one tree (mount.New) when set, read-only when t.ReadOnly. A
// nil t is the whole store with opts as given. A limit set in opts wins
// over t's, as it wins over a store URL's.
func TenantHandler(store blob.Store, t *Tenant, opts memory.Options) (*memory.Handler, error) {
	store, err := tenantStore(store, t)
	if err != nil {
		return nil, err
	}
	if t != nil && t.ReadOnly {
		opts.ReadOnly = true
	}
	return memory.New(store, opts)
}

// tenantStore returns the part of store tenant t sees (see TenantHandler).
func tenantStore(store blob.Store, t *Tenant) (blob.Store, error) {
	if t != nil && t.Prefix != "" {
		var err error
		if store, err = blob.Prefix(store, t.Prefix); err != nil {
			return nil, fmt.Errorf("mcpserver: tenant %q: %w", t.Name, err)
		}
	}
	if t != nil {
		p, err := policyOf(t.policy, t.Policy, t.Secrets)
		if err != nil {
			return nil, fmt.Errorf("mcpserver: tenant %q: %w", t.Name, err)
		}
		store = withPolicy(store, p)
	}
	if t != nil {
		l, err := t.TreeLimits.parse()
		if err != nil {
			return nil, fmt.Errorf("mcpserver: tenant %q: %w", t.Name, err)
		}
		if len(t.Mounts) > 0 {
			if store, err = tenantMounts(store, t.Mounts, l); err != nil {
				return nil, fmt.Errorf("mcpserver: tenant %q: %w", t.Name, err)
			}
		}
		// Above the mount table too, whose view limit is the tenant's.
		store = blob.WithLimits(store, l)
	}
	if t != nil && t.ReadOnly {
		store = blob.ReadOnly(store)
	}
	return store, nil
}

// tenantMounts returns the mount table of mounts over store. Each mount
// has its own limits where it sets them, else the tenant's (tenant), else
// store's: a mount's limits are those its store reports (blob.MountPoint),
// so the tenant's must be on each mount's store, not only above the table.
func tenantMounts(store blob.Store, mounts []TenantMount, tenant blob.Limits) (blob.Store, error) {
	table := make([]mount.Mount, len(mounts))
	for i, m := range mounts {
		s := store
		if m.Prefix != "" {
			var err error
			if s, err = blob.Prefix(store, m.Prefix); err != nil {
				return nil, fmt.Errorf("mount %q: %w", m.Name, err)
			}
		}
		p, err := policyOf(m.policy, m.Policy, m.Secrets)
		if err != nil {
			return nil, fmt.Errorf("mount %q: %w", m.Name, err)
		}
		s = withPolicy(s, p)
		l, err := m.TreeLimits.parse()
		if err != nil {
			return nil, fmt.Errorf("mount %q: %w", m.Name, err)
		}
		s = blob.WithLimits(blob.WithLimits(s, tenant), l)
		table[i] = mount.Mount{Name: m.Name, Store: s, ReadOnly: m.ReadOnly}
	}
	return mount.New(table)
}

func (h *HTTP) beginRequest() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return false
	}
	h.active++
	return true
}

func (h *HTTP) endRequest() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.active--; h.active == 0 {
		for _, ch := range h.idle {
			close(ch)
		}
		h.idle = nil
	}
}

// drain refuses new requests from now on and waits until the requests in
// flight are answered, or ctx is done.
func (h *HTTP) drain(ctx context.Context) error {
	h.mu.Lock()
	h.draining = true
	if h.active == 0 {
		h.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	h.idle = append(h.idle, ch)
	h.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcpserver: requests still in flight: %w", ctx.Err())
	}
}

// Serve serves h on ln (over TLS when tlsConfig is set: it must hold the
// certificate) until ctx is done, then shuts down gracefully: it stops
// accepting, refuses new requests (503), lets the commands in flight finish
// and their answers go out, ends the sessions, and returns nil, all within
// the shutdown timeout. It refuses, closing ln, to serve without tokens on an
// address other than loopback (ErrNoAuth).
func (h *HTTP) Serve(ctx context.Context, ln net.Listener, tlsConfig *tls.Config) error {
	if err := h.CheckAddr(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(h.opts.Logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			srv.TLSConfig = tlsConfig
			served <- srv.ServeTLS(ln, "", "")
		} else {
			served <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-served:
		return fmt.Errorf("mcpserver: serving: %w", err)
	case <-ctx.Done():
	}
	return h.shutdown(srv)
}

// CheckAddr returns the error Serve gives for a listener on addr: ErrNoAuth
// when h has no tokens and addr is not loopback, else nil.
func (h *HTTP) CheckAddr(addr net.Addr) error {
	if h.opts.Tokens.Len() == 0 && h.opts.OAuth == nil && !IsLoopback(addr) {
		return fmt.Errorf("%w: %s is not a loopback address; give tokens (a token file or the environment)", ErrNoAuth, addr)
	}
	return nil
}

// shutdown is Serve's graceful end.
func (h *HTTP) shutdown(srv *http.Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), h.opts.ShutdownTimeout)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Shutdown(ctx) }() // no new connections; idle ones close
	var errs []error
	if err := h.drain(ctx); err != nil { // every request in flight answered
		errs = append(errs, err)
	}
	h.mu.Lock()
	servers := make([]*Server, 0, len(h.tenants))
	for _, ts := range h.tenants {
		ts.mu.Lock()
		if ts.srv != nil {
			servers = append(servers, ts.srv)
		}
		ts.mu.Unlock()
	}
	h.mu.Unlock()
	for _, s := range servers {
		s.Close()
		if err := s.Wait(ctx); err != nil {
			errs = append(errs, err)
		}
		for ss := range s.mcp.Sessions() { // ends the event streams Shutdown waits for
			ss.Close()
		}
	}
	if err := <-stopped; err != nil {
		errs = append(errs, err, srv.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("mcpserver: shutdown: %w", err)
	}
	return nil
}

// IsLoopback reports whether addr is a TCP address on a loopback interface
// (127.0.0.0/8, ::1). An unspecified address (0.0.0.0, ::) is every
// interface, so it is not.
func IsLoopback(addr net.Addr) bool {
	a, ok := addr.(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}
