package web

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

// DefaultAddr is the address "cloudmem web" serves by default.
const DefaultAddr = "127.0.0.1:8080"

// ContentSecurityPolicy is the policy of every page: nothing but the
// console's own style sheet, its own images and forms to itself; no script
// of any origin, no frame, no plugin.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

// rawPolicy is the policy of an image served raw: it runs nothing, even
// if a browser were to render it as a document.
const rawPolicy = "default-src 'none'; sandbox"

// ErrNoAuth is the error of Serve on an address other than loopback with
// no tokens: anyone who reaches the port could read and change the memory.
var ErrNoAuth = errors.New("web: serving beyond loopback needs tokens")

// Options configures a Server.
type Options struct {
	// History is the store the console shows: every page reads through it
	// and every action writes through it, so that each is recorded. A
	// store that has no history records still works: its files show with
	// no recorded versions. Exactly one of History and Mounts is set.
	History *history.Store
	// Store, when set beside History, is the store the console reads and
	// writes memory files through instead of History, which must lie
	// beneath it (cloudmem puts the URL's write policy, read-only and
	// limits layers above its history, as storeurl stacks them, so that
	// the policy's expiry deletions are recorded); the history pages still
	// read History.
	Store blob.Store
	// Mounts, instead of History, shows a mount table: each store at
	// /memories/NAME, with its own history (or none), as package mount
	// composes them.
	Mounts []Mount
	// Memory configures the memory handlers the console reads and writes
	// through; a read-only tenant's is read-only whatever it says.
	Memory memory.Options
	// ReadOnly shows the store without actions, whoever logs in.
	ReadOnly bool
	// Tokens are the MCP server's tokens and tenants. With none, the
	// console needs no login, shows the whole store, and Serve refuses any
	// address but loopback.
	Tokens *mcpserver.Tokens
	// OAuth, when set, logs people in with the OAuth access tokens the MCP
	// server accepts (its HTTPOptions.OAuth): each request's token is
	// verified again, so a login ends when its token expires, and the
	// token's tenant and scope give what the person sees and may do, as
	// over MCP (a token without memory:write is read-only). It takes no
	// Tokens.
	OAuth *mcpserver.OAuth
	// Actor is who the console's changes are recorded as when there are
	// no tokens (a tenant's changes are recorded as the tenant's name).
	Actor string
	// Search configures each tenant's search index; nil means the
	// defaults.
	Search *search.Options
	// Logger receives the details of failures, which pages show in short
	// form. Nil means slog.Default().
	Logger *slog.Logger
}

//go:embed templates/*.html static/style.css
var files embed.FS

// Server is the web console, an http.Handler. It is safe for concurrent
// use, and keeps no session state: the session is the request's cookie.
type Server struct {
	opts   Options
	top    blob.Store // the store shown: Options.History, or the mount table
	parts  []*part    // the stores whose history is read: top, or each mount
	actors actorCache // the last change of each file, for the tree page
	secret []byte     // the CSRF key of the console without tokens, per process
	pages  map[string]*template.Template
	mux    *http.ServeMux
	h      http.Handler // mux behind the cross-origin check and the headers

	mu     sync.Mutex
	scopes map[string]*scope // by scopeName
}

// scope is what one tenant (or the console without tokens) sees.
type scope struct {
	tenant   *mcpserver.Tenant // nil: the whole store
	handler  *memory.Handler
	index    *search.Index
	readOnly bool // no actions
}

// New returns a console serving opts.
func New(opts Options) (*Server, error) {
	top, parts, err := openParts(opts)
	if err != nil {
		return nil, err
	}
	if opts.OAuth != nil && opts.Tokens.Len() > 0 {
		return nil, errors.New("web: Options takes Tokens or OAuth, not both")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if blob.IsReadOnly(top) {
		opts.ReadOnly = true
	}
	s := &Server{opts: opts, top: top, parts: parts, actors: actorCache{m: map[string]cachedActor{}},
		secret: make([]byte, 32), scopes: map[string]*scope{}, mux: http.NewServeMux()}
	rand.Read(s.secret) // never fails (crypto/rand)
	if s.pages, err = parsePages(); err != nil {
		return nil, err
	}
	s.routes()
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, nil, http.StatusForbidden, msgCSRF)
	}))
	s.h = headers(cop.Handler(s.mux))
	return s, nil
}

// ServeHTTP serves the console.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }

// maxFormBytes bounds a request's body: the console's forms hold a path,
// a version, a token and a CSRF token.
const maxFormBytes = 16 << 10

// headers sets the headers every response carries, and bounds the body.
func headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// scopeName names the scope of tenant t: "" for the whole store, else its
// name, marked when read-only (an OAuth tenant is read-only for a token
// without memory:write, and writable for one with it).
func scopeName(t *mcpserver.Tenant) string {
	switch {
	case t == nil:
		return ""
	case t.ReadOnly:
		return t.Name + " (read-only)"
	}
	return t.Name
}

// scopeOf returns the scope of tenant t (nil: the whole store), opening its
// handler and index at first use.
func (s *Server) scopeOf(t *mcpserver.Tenant) (*scope, error) {
	name := scopeName(t)
	s.mu.Lock()
	defer s.mu.Unlock()
	if sc, ok := s.scopes[name]; ok {
		return sc, nil
	}
	opts := s.opts.Memory
	opts.Logger = s.opts.Logger
	if s.opts.ReadOnly {
		opts.ReadOnly = true
	}
	h, idx, err := mcpserver.TenantSearch(s.top, t, opts, s.opts.Search)
	if err != nil {
		return nil, err
	}
	sc := &scope{tenant: t, handler: h, index: idx, readOnly: opts.ReadOnly || t != nil && t.ReadOnly}
	s.scopes[name] = sc
	return sc, nil
}

// Serve serves the console on ln (over TLS when tlsConfig is set: it must
// hold the certificate) until ctx is done, then shuts down, letting the
// requests in flight finish within 30 seconds. It refuses, closing ln, to
// serve without tokens on an address other than loopback (ErrNoAuth).
func (s *Server) Serve(ctx context.Context, ln net.Listener, tlsConfig *tls.Config) error {
	if err := s.CheckAddr(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelWarn),
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
		return fmt.Errorf("web: serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("web: shutdown: %w", errors.Join(err, srv.Close()))
	}
	return nil
}

// CheckAddr returns the error Serve gives for a listener on addr: ErrNoAuth
// when the console has neither tokens nor OAuth and addr is not loopback,
// else nil.
func (s *Server) CheckAddr(addr net.Addr) error {
	if !s.needsLogin() && !mcpserver.IsLoopback(addr) {
		return fmt.Errorf("%w: %s is not a loopback address; give tokens (a token file or the environment) or OAuth", ErrNoAuth, addr)
	}
	return nil
}
