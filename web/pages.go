package web

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

// maxAuditRows bounds the events the audit page shows (the latest).
const maxAuditRows = 1000

// searchLimit is how many hits the search page shows.
const searchLimit = 50

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/tree", http.StatusSeeOther)
	})
	m.HandleFunc("GET /static/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=3600")
		http.ServeFileFS(w, r, files, "static/style.css")
	})
	m.HandleFunc("GET /login", s.serveLogin)
	m.HandleFunc("POST /login", s.serveLogin)
	m.HandleFunc("POST /logout", s.withSession(s.serveLogout))
	m.HandleFunc("GET /tree", s.withSession(s.serveTree))
	m.HandleFunc("GET /file", s.withSession(s.serveFile))
	m.HandleFunc("GET /raw", s.withSession(s.serveRaw))
	m.HandleFunc("GET /history", s.withSession(s.serveHistory))
	m.HandleFunc("GET /diff", s.withSession(s.serveDiff))
	m.HandleFunc("GET /audit", s.withSession(s.serveAudit))
	m.HandleFunc("GET /search", s.withSession(s.serveSearch))
	m.HandleFunc("GET /restore", s.withSession(s.confirmRestore))
	m.HandleFunc("POST /restore", s.withSession(s.restore))
	m.HandleFunc("GET /redact", s.withSession(s.confirmRedact))
	m.HandleFunc("POST /redact", s.withSession(s.redact))
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, nil, http.StatusNotFound, msgNotFound)
	})
}

// crumb is one link of a path's breadcrumbs.
type crumb struct {
	Name, Path string
}

// crumbs returns the breadcrumbs of the memory path p: /memories, then each
// directory down to p.
func crumbs(p string) []crumb {
	out := []crumb{{Name: "memories", Path: "/memories"}}
	rest, _ := strings.CutPrefix(p, "/memories/")
	if rest == p {
		return out
	}
	at := "/memories"
	for _, seg := range strings.Split(rest, "/") {
		at += "/" + seg
		out = append(out, crumb{Name: seg, Path: at})
	}
	return out
}

// fileCrumbs returns the breadcrumbs of a file's directory.
func fileCrumbs(p string) []crumb {
	return crumbs(p[:strings.LastIndexByte(p, '/')])
}

// resolve validates the path parameter of r (def when absent) and returns
// the memory path and its key in the session's tree.
func resolve(r *http.Request, def string) (p, key string, err error) {
	p = cmp.Or(r.FormValue("path"), def)
	key, err = memory.Resolve(p)
	if err != nil {
		return p, "", err
	}
	return memory.PathOf(key), key, nil
}

// treeEntry is one row of the tree page: a directory (Files > 0) or a file.
type treeEntry struct {
	Name, Path string
	Dir        bool
	Files      int // files beneath a directory
	Size       int64
	Modified   time.Time
	Actor      string // who made the last recorded change of a file
	key        string // a file's key in the session's tree
}

type treeData struct {
	Path    string
	Crumbs  []crumb
	Entries []treeEntry
}

// serveTree shows one directory: its subdirectories (files beneath, total
// size, latest change) and its files (size, last change, who made it).
func (s *Server) serveTree(w http.ResponseWriter, r *http.Request, se *session) {
	p, key, err := resolve(r, "/memories")
	if err != nil {
		s.failErr(w, r, se, p, "", err)
		return
	}
	infos, err := se.scope.handler.Files(r.Context(), p)
	if err != nil {
		s.failErr(w, r, se, p, "", err)
		return
	}
	var entries []treeEntry
	var direct []memory.FileInfo // the directory's own files
	at := map[string]int{}       // directory name -> index in entries
	for _, f := range infos {
		rest := f.Key
		if key != "" {
			rest = strings.TrimPrefix(f.Key, key+"/")
		}
		name, _, isDir := strings.Cut(rest, "/")
		if !isDir {
			direct = append(direct, f)
			entries = append(entries, treeEntry{Name: name, Path: f.Path, Size: f.Size, Modified: f.Modified, key: f.Key})
			continue
		}
		i, ok := at[name]
		if !ok {
			i = len(entries)
			at[name] = i
			entries = append(entries, treeEntry{Name: name, Path: memory.PathOf(strings.TrimPrefix(key+"/"+name, "/")), Dir: true})
		}
		e := &entries[i]
		e.Files++
		e.Size += f.Size
		if f.Modified.After(e.Modified) {
			e.Modified = f.Modified
		}
	}
	actors := s.lastActors(r.Context(), se, direct)
	for i := range entries {
		entries[i].Actor = actors[entries[i].key]
	}
	slices.SortStableFunc(entries, func(a, b treeEntry) int {
		if a.Dir != b.Dir {
			if a.Dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	s.render(w, r, http.StatusOK, "tree", se, page{Title: p, Data: treeData{Path: p, Crumbs: crumbs(p), Entries: entries}})
}

// line is one numbered line of a file.
type line struct {
	N    int
	Text string
}

type fileData struct {
	Path     string
	Crumbs   []crumb
	Version  *history.Version // the version shown; nil for the current content
	Size     int64
	Image    bool // shown with <img>, from /raw
	Binary   bool
	Lines    []line
	Markdown bool    // the page shows Blocks instead of Lines
	CanMD    bool    // the file is Markdown (.md): offer the rendered view
	Blocks   []block // the rendered Markdown
}

// serveFile shows a file, or with version=ID one of its versions: its lines
// numbered, an image, or a note for other binary content; with view=md a
// Markdown file's blocks.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, se *session) {
	p, key, err := resolve(r, "")
	if err != nil {
		s.failErr(w, r, se, p, "", err)
		return
	}
	id := r.FormValue("version")
	data, v, err := s.content(r, se, key, id)
	if err != nil {
		s.failErr(w, r, se, p, id, err)
		return
	}
	d := fileData{Path: p, Crumbs: fileCrumbs(p), Version: v, Size: int64(len(data)),
		CanMD: strings.EqualFold(pathExt(p), ".md")}
	switch {
	case memory.ImageType(p, data) != "":
		d.Image = true
	case !utf8.Valid(data):
		d.Binary = true
	case d.CanMD && r.FormValue("view") == "md":
		d.Markdown, d.Blocks = true, markdown(string(data))
	default:
		d.Lines = numbered(string(data))
	}
	s.render(w, r, http.StatusOK, "file", se, page{Title: p, Data: d})
}

func pathExt(p string) string {
	i := strings.LastIndexByte(p, '.')
	if i < 0 || strings.Contains(p[i:], "/") {
		return ""
	}
	return p[i:]
}

// content returns the current content of the file at key of the session's
// tree (id ""), or the content of its version id and that version.
func (s *Server) content(r *http.Request, se *session, key, id string) ([]byte, *history.Version, error) {
	if id == "" {
		data, err := se.scope.handler.ReadFile(r.Context(), memory.PathOf(key))
		return data, nil, err
	}
	p, pkey, err := s.historyOf(se, key)
	if err != nil {
		return nil, nil, err
	}
	data, v, err := p.hist.Show(r.Context(), pkey, id)
	if err != nil {
		return nil, nil, err
	}
	s.showPaths(se, p, &v)
	return data, &v, nil
}

// historyOf returns the part holding the file at key of the session's
// tree, and its key there: a not-found error for a key outside the
// session's mounts, errNoHistoryKept for a mount without history.
func (s *Server) historyOf(se *session, key string) (*part, string, error) {
	skey, _, ok := storeKey(se.scope.tenant, key)
	var p *part
	var pkey string
	if ok && key != "" {
		p, pkey, ok = s.locate(skey)
	}
	switch {
	case !ok || key == "":
		return nil, "", &memory.Error{Kind: memory.ErrNotFound, Msg: msgNoFile(memory.PathOf(key))}
	case p.hist == nil:
		return nil, "", errNoHistoryKept
	}
	return p, pkey, nil
}

// numbered splits text into numbered lines (a last line without a newline
// counts; an empty text has none).
func numbered(text string) []line {
	var out []line
	n := 0
	for l := range strings.Lines(text) {
		n++
		out = append(out, line{N: n, Text: strings.TrimSuffix(l, "\n")})
	}
	return out
}

// serveRaw serves an image file (or version) as itself, for the <img> of
// the file page. Anything that does not sniff as PNG, JPEG, GIF or WebP is
// refused, so no content is ever served as a document of this origin.
func (s *Server) serveRaw(w http.ResponseWriter, r *http.Request, se *session) {
	p, key, err := resolve(r, "")
	if err != nil {
		s.failErr(w, r, se, p, "", err)
		return
	}
	id := r.FormValue("version")
	data, _, err := s.content(r, se, key, id)
	if err != nil {
		s.failErr(w, r, se, p, id, err)
		return
	}
	media := memory.ImageType(p, data)
	if media == "" {
		s.fail(w, r, se, http.StatusUnsupportedMediaType, msgNoImage)
		return
	}
	w.Header().Set("Content-Type", media)
	w.Header().Set("Content-Security-Policy", rawPolicy)
	w.Header().Set("Content-Disposition", "inline")
	w.Write(data)
}

// versionRow is one version on the history page.
type versionRow struct {
	history.Version
	Shown      string // the memory path it had; "" outside the session's tree
	FromShown  string // a rename's old memory path
	HasContent bool
}

type historyData struct {
	Path     string
	Crumbs   []crumb
	Versions []versionRow
	ReadOnly bool // the file cannot be changed: no actions
}

// serveHistory shows the timeline of a file's versions, newest first, with
// a form to compare two of them and, unless read-only, the actions.
func (s *Server) serveHistory(w http.ResponseWriter, r *http.Request, se *session) {
	p, key, err := resolve(r, "")
	if err != nil {
		s.failErr(w, r, se, p, "", err)
		return
	}
	vs, err := s.versions(r, se, key)
	if err != nil {
		s.failErr(w, r, se, p, "", err)
		return
	}
	skey, mountRO, _ := storeKey(se.scope.tenant, key)
	pt, _, _ := s.locate(skey)
	rows := make([]versionRow, len(vs))
	for i, v := range vs {
		rows[len(vs)-1-i] = versionRow{Version: v, Shown: v.Path, FromShown: v.From,
			HasContent: v.ID != "" && v.Op != history.OpDeleted && v.Redacted == nil}
	}
	s.render(w, r, http.StatusOK, "history", se, page{Title: "History of " + p,
		Data: historyData{Path: p, Crumbs: fileCrumbs(p), Versions: rows, ReadOnly: se.scope.readOnly || mountRO || pt.readOnly}})
}

// versions returns the history of the file at key of the session's tree,
// oldest first, with the paths as the session sees them (see showPaths).
func (s *Server) versions(r *http.Request, se *session, key string) ([]history.Version, error) {
	p, pkey, err := s.historyOf(se, key)
	if err != nil {
		return nil, err
	}
	vs, err := p.hist.History(r.Context(), pkey)
	for i := range vs {
		s.showPaths(se, p, &vs[i])
	}
	return vs, err
}

// showPaths turns the keys of v, keys of part p's store, into memory paths
// of the session's tree ("" for one it does not see).
func (s *Server) showPaths(se *session, p *part, v *history.Version) {
	show := func(key string) string {
		if key == "" {
			return ""
		}
		if k, ok := tenantKey(se.scope.tenant, p.topKey(key)); ok {
			return memory.PathOf(k)
		}
		return ""
	}
	v.Path, v.From = show(v.Path), show(v.From)
}

// diffLine is one line of a unified diff, with its kind for the style:
// "head", "hunk", "add", "del", "note" or "same".
type diffLine struct {
	Kind, Text string
}

type diffData struct {
	Path     string
	Crumbs   []crumb
	From, To string // version ids; To "" is the current content
	Lines    []diffLine
}

// serveDiff shows the unified diff from version from to version to (the
// current content when to is empty).
func (s *Server) serveDiff(w http.ResponseWriter, r *http.Request, se *session) {
	p, key, err := resolve(r, "")
	if err != nil {
		s.failErr(w, r, se, p, "", err)
		return
	}
	from, to := r.FormValue("from"), r.FormValue("to")
	lines, err := s.diff(r, se, key, from, to)
	if err != nil {
		s.failErr(w, r, se, p, cmp.Or(to, from), err)
		return
	}
	s.render(w, r, http.StatusOK, "diff", se, page{Title: "Changes of " + p,
		Data: diffData{Path: p, Crumbs: fileCrumbs(p), From: from, To: to, Lines: lines}})
}

// diff returns the diff of the file at key from version from to version to
// ("": the current content, empty when there is no file), labelled with
// memory paths.
func (s *Server) diff(r *http.Request, se *session, key, from, to string) ([]diffLine, error) {
	if from == "" {
		return nil, history.ErrUnknownVersion
	}
	a, va, err := s.content(r, se, key, from)
	if err != nil {
		return nil, err
	}
	var b []byte
	bName := memory.PathOf(key)
	if to == "" {
		b, err = se.scope.handler.ReadFile(r.Context(), memory.PathOf(key))
		if errors.Is(err, memory.ErrNotFound) {
			err = nil
		}
	} else {
		var vb *history.Version
		b, vb, err = s.content(r, se, key, to)
		if vb != nil {
			bName = vb.Path + "@" + to
		}
	}
	if err != nil {
		return nil, err
	}
	return diffLines(history.UnifiedDiff(va.Path+"@"+from, bName, a, b)), nil
}

// diffLines splits a unified diff into its lines and their kinds.
func diffLines(d string) []diffLine {
	var out []diffLine
	for l := range strings.Lines(d) {
		l = strings.TrimSuffix(l, "\n")
		kind := "same"
		switch {
		case len(out) < 2 && (strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ")):
			kind = "head"
		case strings.HasPrefix(l, "@@"):
			kind = "hunk"
		case strings.HasPrefix(l, "+"):
			kind = "add"
		case strings.HasPrefix(l, "-"):
			kind = "del"
		case strings.HasPrefix(l, `\`):
			kind = "note"
		}
		out = append(out, diffLine{Kind: kind, Text: l})
	}
	return out
}

// auditRow is one event of the audit page, with memory paths.
type auditRow struct {
	history.Event
}

type auditData struct {
	Actor, Path, Since, Until string // the filter, as given
	Rows                      []auditRow
	Note                      string // when rows were left out
	NoHistory                 string // the mounts whose changes are not in the log
}

// audit returns the events of every part the session sees, in time order,
// with the keys of the session's tree as paths (From "" when the session
// does not see it), and the memory paths of the mounts it sees that keep
// no history.
func (s *Server) audit(ctx context.Context, se *session, f history.AuditFilter) (events []history.Event, missing []string, err error) {
	for _, p := range s.parts {
		at, seen := seesPart(se.scope.tenant, p)
		switch {
		case !seen:
			continue
		case p.hist == nil:
			missing = append(missing, memory.PathOf(at))
			continue
		}
		evs, err := p.hist.Audit(ctx, f)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range evs {
			k, ok := tenantKey(se.scope.tenant, p.topKey(e.Path))
			if !ok {
				continue
			}
			e.Path = k
			if from := e.From; from != "" {
				e.From, _ = tenantKey(se.scope.tenant, p.topKey(from))
			}
			events = append(events, e)
		}
	}
	if len(s.parts) > 1 {
		slices.SortStableFunc(events, func(a, b history.Event) int {
			return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.Version, b.Version))
		})
	}
	return events, missing, nil
}

// serveAudit shows the audit trail, newest first, filtered by actor (exact),
// path (a file or a directory and everything beneath) and time (since,
// until: a date or a date and time, UTC).
func (s *Server) serveAudit(w http.ResponseWriter, r *http.Request, se *session) {
	d := auditData{Actor: r.FormValue("actor"), Path: r.FormValue("path"), Since: r.FormValue("since"), Until: r.FormValue("until")}
	render := func(status int, msg string) {
		s.render(w, r, status, "audit", se, page{Title: "Audit log", Error: msg, Data: d})
	}
	f := history.AuditFilter{Actor: d.Actor}
	var until time.Time
	var err error
	if f.Since, err = parseTime(d.Since, false); err != nil {
		render(http.StatusBadRequest, msgBadTime("since", d.Since))
		return
	}
	if until, err = parseTime(d.Until, true); err != nil {
		render(http.StatusBadRequest, msgBadTime("until", d.Until))
		return
	}
	var pathKey string
	if d.Path != "" {
		if pathKey, err = memory.Resolve(d.Path); err != nil {
			render(http.StatusBadRequest, err.Error())
			return
		}
	}
	events, missing, err := s.audit(r.Context(), se, f)
	if err != nil {
		status, msg := s.describe(d.Path, "", err)
		render(status, msg)
		return
	}
	if len(missing) > 0 {
		d.NoHistory = msgNoHistoryKept(missing)
	}
	var rows []auditRow
	for _, e := range slices.Backward(events) {
		k := e.Path
		if !until.IsZero() && e.Time.After(until) || pathKey != "" && k != pathKey && !strings.HasPrefix(k, pathKey+"/") {
			continue
		}
		e.Path = memory.PathOf(k)
		if e.From != "" {
			e.From = memory.PathOf(e.From)
		}
		rows = append(rows, auditRow{e})
	}
	if len(rows) > maxAuditRows {
		d.Note = msgTruncatedAudit(maxAuditRows, len(rows))
		rows = rows[:maxAuditRows]
	}
	d.Rows = rows
	render(http.StatusOK, "")
}

// parseTime reads a filter's time: "" (none), a date (its start, or with
// end its last instant), a date and minute as a datetime-local field sends
// it, or RFC 3339; UTC unless it says otherwise.
func parseTime(v string, end bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			t = t.Add(24*time.Hour - time.Nanosecond)
		}
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.RFC3339Nano} {
		if t, err := time.Parse(layout, v); err == nil {
			if end && layout == "2006-01-02T15:04" {
				t = t.Add(time.Minute - time.Nanosecond)
			}
			return t, nil
		}
	}
	return time.Time{}, errors.New("not a time")
}

// snippetPart is a piece of a search snippet: a match (Mark) or not.
type snippetPart struct {
	Text string
	Mark bool
}

type hitRow struct {
	search.Hit
	Parts []snippetPart
}

type searchData struct {
	Query string
	Total int
	Hits  []hitRow
}

// serveSearch runs a search of the session's tree and shows the hits, each
// with its best line and the matches marked.
func (s *Server) serveSearch(w http.ResponseWriter, r *http.Request, se *session) {
	d := searchData{Query: r.FormValue("q")}
	if strings.TrimSpace(d.Query) == "" {
		s.render(w, r, http.StatusOK, "search", se, page{Title: "Search", Data: d})
		return
	}
	res, err := se.scope.index.Search(r.Context(), search.Request{Query: d.Query, Limit: searchLimit})
	switch {
	case errors.Is(err, search.ErrNoWords), errors.Is(err, search.ErrQueryTooLong):
		s.render(w, r, http.StatusBadRequest, "search", se, page{Title: "Search", Error: err.Error(), Data: d})
		return
	case err != nil:
		status, msg := s.describe("/memories", "", err)
		s.render(w, r, status, "search", se, page{Title: "Search", Error: msg, Data: d})
		return
	}
	d.Total = res.Total
	for _, h := range res.Hits {
		d.Hits = append(d.Hits, hitRow{Hit: h, Parts: marks(h.Snippet)})
	}
	s.render(w, r, http.StatusOK, "search", se, page{Title: "Search", Data: d})
}

// marks splits a snippet at its match marks (search.MarkStart, MarkEnd).
func marks(snippet string) []snippetPart {
	var out []snippetPart
	for snippet != "" {
		before, rest, found := strings.Cut(snippet, search.MarkStart)
		if before != "" {
			out = append(out, snippetPart{Text: before})
		}
		if !found {
			break
		}
		m, after, _ := strings.Cut(rest, search.MarkEnd)
		out = append(out, snippetPart{Text: m, Mark: true})
		snippet = after
	}
	return out
}
