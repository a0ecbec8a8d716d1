package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
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

// session returns the request's session: errLogin when the console needs
// a login the request does not carry, or the error of opening the tenant's
// memory.
func (s *Server) session(r *http.Request) (*session, error) {
	if s.opts.Tokens.Len() == 0 {
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
	t, found := s.opts.Tokens.Lookup(token)
	if !found {
		return nil, errLogin
	}
	sc, err := s.scopeOf(t)
	if err != nil {
		return nil, err
	}
	return &session{scope: sc, who: t.Name, csrf: csrfToken([]byte(token)), loggedIn: true}, nil
}

// withSession runs fn with the request's session. Without one, a GET goes
// to the login page and anything else is refused.
func (s *Server) withSession(fn func(w http.ResponseWriter, r *http.Request, se *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		se, err := s.session(r)
		switch {
		case errors.Is(err, errLogin) && (r.Method == http.MethodGet || r.Method == http.MethodHead):
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
	b, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil || len(b) == 0 {
		return "", false
	}
	return string(b), true
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
	if s.opts.Tokens.Len() == 0 {
		http.Redirect(w, r, "/tree", http.StatusSeeOther)
		return
	}
	if r.Method == http.MethodGet {
		s.render(w, r, http.StatusOK, "login", nil, page{Title: "Log in"})
		return
	}
	token := r.PostFormValue("token")
	if _, ok := s.opts.Tokens.Lookup(token); !ok || token == "" || len(token) > maxTokenBytes {
		s.render(w, r, http.StatusUnauthorized, "login", nil, page{Title: "Log in", Error: msgBadToken})
		return
	}
	http.SetCookie(w, cookie(r, base64.RawURLEncoding.EncodeToString([]byte(token)), 0))
	http.Redirect(w, r, "/tree", http.StatusSeeOther)
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
