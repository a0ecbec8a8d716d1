package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// page is what every template gets: the layout's fields and the page's own
// Data.
type page struct {
	Title    string
	Who      string // who is logged in or acting; "" before a login
	LoggedIn bool   // show "Log out"
	ReadOnly bool   // no actions
	CSRF     string // for the forms that post
	Error    string // a failure to show above the content
	Data     any
}

// funcs are the templates' helpers. None of them returns HTML: every
// value is escaped by html/template where it lands.
var funcs = template.FuncMap{
	"time":   formatTime,
	"bytes":  formatBytes,
	"binary": func(n int64) string { return msgBinary(formatBytes(n)) },
}

// formatTime is a time as the pages show it: UTC, to the second; "" for
// the zero time.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// formatBytes is a size as the pages show it: "1 byte", "532 bytes",
// "12.3 KiB", "4.0 MiB".
func formatBytes(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

// parsePages parses every page with the layout.
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.New(name).Funcs(funcs).ParseFS(files, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("web: parsing %s: %w", n, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes page name with status, for session se (nil before a
// login). It renders into a buffer first, so that a failure writes no half
// page.
func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, name string, se *session, p page) {
	if se != nil {
		p.Who, p.LoggedIn, p.ReadOnly, p.CSRF = se.who, se.loggedIn, se.scope.readOnly, se.csrf
	}
	var b bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&b, "layout", p); err != nil {
		s.opts.Logger.Error("web: rendering a page", "page", name, "err", err)
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(b.Bytes())
	}
}

// fail writes the error page: msg with status.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, se *session, status int, msg string) {
	s.render(w, r, status, "error", se, page{Title: http.StatusText(status), Error: msg})
}

// failErr writes the error page for err, a failure of the memory handler,
// the history or search: its text where it is written for people (the
// memory handler's texts name no host, key or credential), else a short
// text, the details going to the log.
func (s *Server) failErr(w http.ResponseWriter, r *http.Request, se *session, p string, id string, err error) {
	status, msg := s.describe(p, id, err)
	s.fail(w, r, se, status, msg)
}

// describe returns the HTTP status and the text of err, about the memory
// path p and version id ("" when none).
func (s *Server) describe(p, id string, err error) (int, string) {
	var me *memory.Error
	switch {
	case errors.Is(err, errNoHistoryKept):
		return http.StatusNotFound, msgHistoryNotKept(p)
	case errors.Is(err, history.ErrUnknownVersion):
		return http.StatusNotFound, msgUnknownVersion(p, id)
	case errors.Is(err, history.ErrNoContent):
		return http.StatusConflict, msgNoContent(id)
	case errors.Is(err, history.ErrCurrentVersion):
		return http.StatusConflict, msgCurrentContent(id)
	case errors.Is(err, blob.ErrPrecondition):
		return http.StatusConflict, msgChanged(p)
	case errors.As(err, &me):
		switch me.Kind {
		case memory.ErrNotFound:
			return http.StatusNotFound, me.Error()
		case memory.ErrReadOnly:
			return http.StatusForbidden, me.Error()
		case memory.ErrStorage:
			return http.StatusBadGateway, me.Error()
		case memory.ErrInvalidPath, memory.ErrNotFile, memory.ErrNotDir:
			return http.StatusBadRequest, me.Error()
		}
		return http.StatusConflict, me.Error()
	case errors.Is(err, blob.ErrNotExist):
		return http.StatusNotFound, msgNoHistory(p)
	}
	s.opts.Logger.Error("web: the memory storage failed", "path", p, "err", err)
	return http.StatusBadGateway, msgStorage
}
