package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/cloudmem/cloudmem/mcpserver"
)

// CookieName is the cookie that holds a logged-in person's token.
const CookieName = "cloudmem_token"

// maxTokenBytes bounds a token a login form may send.
const maxTokenBytes = 4096

// session is who makes a request, and what they see.
type session struct {
	scope    *scope
	who      string // the actor of their changes: the tenant's name, or Options.Actor
	csrf     string // the token every form they post must carry
	loggedIn bool   // by a token (they can log out)
}

// errLogin means the request carries no valid login.
var errLogin = errors.New("web: not logged in")

// loginEnded is the error of a request whose cookie holds an OAuth access
// token that no longer verifies (it expired, or its key or tenant is
// gone): the person is logged out, and told why.
type loginEnded struct {
	reason string // the verifier's text (docs/spec.md "OAuth over HTTP")
}

func (e *loginEnded) Error() string { return "web: the login ended: " + e.reason }

// needsLogin reports whether the console logs people in: it has tokens or
// OAuth.
func (s *Server) needsLogin() bool { return s.opts.Tokens.Len() > 0 || s.opts.OAuth != nil }

// session returns the request's session: errLogin when the console needs
// a login the request does not carry, or the error of opening the tenant's
// memory.
func (s *Server) session(r *http.Request) (*session, error) {
	if !s.needsLogin() {
		sc, err := s.scopeOf(nil)
		if err != nil {
			return nil, err
		}
		return &session{scope: sc, who: s.opts.Actor, csrf: csrfToken(s.secret)}, nil
	}
	token, found := tokenOf(r)
	if !found {
		return nil, errLogin
	}
	t, err := s.tenantOf(r, token)
	if err != nil {
		return nil, err
	}
	sc, err := s.scopeOf(t)
	if err != nil {
		return nil, err
	}
	return &session{scope: sc, who: t.Name, csrf: csrfToken([]byte(token)), loggedIn: true}, nil
}

// tenantOf returns the tenant of a token: the token file's, or with OAuth
// the tenant of the access token, verified now (so an expired token ends
// the login at once), read-only without the memory:write scope. A token
// OAuth refuses is a *loginEnded; one the token file lacks is errLogin.
func (s *Server) tenantOf(r *http.Request, token string) (*mcpserver.Tenant, error) {
	if s.opts.OAuth == nil {
		t, found := s.opts.Tokens.Lookup(token)
		if !found {
			return nil, errLogin
		}
		return t, nil
	}
	g, err := s.opts.OAuth.Verify(r.Context(), token)
	if te, ok := errors.AsType[*mcpserver.TokenError](err); ok {
		return nil, &loginEnded{reason: te.Description}
	}
	if err != nil { // not reached: Verify's errors are *TokenError
		return nil, &loginEnded{reason: err.Error()}
	}
	return g.Tenant, nil
}

// withSession runs fn with the request's session. Without one, a GET goes
// to the login page and anything else is refused.
func (s *Server) withSession(fn func(w http.ResponseWriter, r *http.Request, se *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		se, err := s.session(r)
		ended, isEnded := errors.AsType[*loginEnded](err)
		read := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case isEnded && read:
			http.SetCookie(w, cookie(r, "", -1))
			s.render(w, r, http.StatusUnauthorized, "login", nil, s.loginPage(msgLoginEnded(ended.reason)))
		case isEnded:
			http.SetCookie(w, cookie(r, "", -1))
			s.fail(w, r, nil, http.StatusForbidden, msgLoginEnded(ended.reason))
		case errors.Is(err, errLogin) && read:
			http.Redirect(w, r, "/login", http.StatusSeeOther)
		case errors.Is(err, errLogin):
			s.fail(w, r, nil, http.StatusForbidden, msgLogin)
		case err != nil:
			s.opts.Logger.Error("web: opening the memory", "err", err)
			s.fail(w, r, nil, http.StatusServiceUnavailable, msgUnavailable)
		default:
			fn(w, r, se)
		}
	}
}

// tokenOf returns the token of the request's cookie.
func tokenOf(r *http.Request) (string, bool) {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return "", false
	}
	if isJWT(c.Value) {
		return c.Value, true
	}
	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
}

// cookieValue is how the cookie holds token: a JWT (an OAuth access token)
// as itself, since its characters are a cookie's and browsers keep no
// cookie over 4 KiB; any other token in base64url, which never holds the
// dots that mark a JWT.
func cookieValue(token string) string {
	if isJWT(token) {
		return token
	}
	return base64.RawURLEncoding.EncodeToString([]byte(token))
}

// isJWT reports whether v has the form of a compact JWT: base64url parts
// joined by dots.
func isJWT(v string) bool {
	if !strings.Contains(v, ".") {
		return false
	}
	for _, c := range v {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// csrfToken is the CSRF token of a session keyed by key (its bearer token,
// or the process's secret): what a cross-site page cannot know, and any
// replica can recompute.
func csrfToken(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("cloudmem web csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF reports whether a POST carries the session's CSRF token.
func checkCSRF(r *http.Request, se *session) bool {
	got := r.PostFormValue("csrf")
	return subtle.ConstantTimeCompare([]byte(got), []byte(se.csrf)) == 1
}

// cookie returns the login cookie holding token (an empty value and a past
// expiry to log out).
func cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: CookieName, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	}
}

// serveLogin shows the login form (GET) or checks a token and sets the
// cookie (POST).
func (s *Server) serveLogin(w http.ResponseWriter, r *http.Request) {
	if !s.needsLogin() {
		http.Redirect(w, r, "/tree", http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodGet {
		s.render(w, r, http.StatusOK, "login", nil, s.loginPage(""))
		return
	}
	token := r.PostFormValue("token")
	if token == "" || len(token) > maxTokenBytes {
		s.render(w, r, http.StatusUnauthorized, "login", nil, s.loginPage(msgBadToken))
		return
	}
	if _, err := s.tenantOf(r, token); err != nil {
		msg := msgBadToken
		if ended, ok := errors.AsType[*loginEnded](err); ok {
			msg = msgTokenRefused(ended.reason)
		}
		s.render(w, r, http.StatusUnauthorized, "login", nil, s.loginPage(msg))
		return
	}
	http.SetCookie(w, cookie(r, cookieValue(token), 0))
	http.Redirect(w, r, "/tree", http.StatusSeeOther)
}

// loginData is what the login page shows: with OAuth, the issuer whose
// access tokens it takes.
type loginData struct {
	Issuer string
}

// loginPage is the login page, with the error msg ("" for none).
func (s *Server) loginPage(msg string) page {
	var d loginData
	if s.opts.OAuth != nil {
		if servers := s.opts.OAuth.Metadata().AuthorizationServers; len(servers) > 0 {
			d.Issuer = servers[0]
		}
	}
	return page{Title: "Log in", Error: msg, Data: d}
}

// serveLogout clears the cookie (a POST with the session's CSRF token).
func (s *Server) serveLogout(w http.ResponseWriter, r *http.Request, se *session) {
	if !checkCSRF(r, se) {
		s.fail(w, r, se, http.StatusForbidden, msgCSRF)
		return
	}
	http.SetCookie(w, cookie(r, "", -1))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
