package web

import (
	"context"
	"net/http"
	"slices"

	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// target is the file and version an action names, as its confirmation
// page shows them.
type target struct {
	Path    string
	Crumbs  []crumb
	Version history.Version // the version to restore or redact
	Message string          // what will happen (the confirmation) or happened
	Blocked bool            // the action cannot be done: Message says why
	Diff    []diffLine      // restore: from the current content to the version
}

// action resolves the path and version parameters of an action and checks
// that the session may act: it writes the refusal and returns ok false
// otherwise. A POST must carry the session's CSRF token, which is checked
// before anything is read.
func (s *Server) action(w http.ResponseWriter, r *http.Request, se *session) (t target, pt *part, pkey string, ok bool) {
	if r.Method == http.MethodPost && !checkCSRF(r, se) {
		s.fail(w, r, se, http.StatusForbidden, msgCSRF)
		return t, nil, "", false
	}
	p, key, err := resolve(r, "")
	if err != nil {
		s.failErr(w, r, se, p, "", err)
		return t, nil, "", false
	}
	skey, mountRO, found := storeKey(se.scope.tenant, key)
	if found {
		pt, pkey, found = s.locate(skey)
	}
	if se.scope.readOnly || mountRO || found && pt.readOnly {
		s.fail(w, r, se, http.StatusForbidden, msgReadOnly)
		return t, nil, "", false
	}
	id := r.FormValue("version")
	if !found {
		s.failErr(w, r, se, p, id, &memory.Error{Kind: memory.ErrNotFound, Msg: msgNoFile(p)})
		return t, nil, "", false
	}
	vs, err := s.versions(r, se, key)
	if err != nil {
		s.failErr(w, r, se, p, id, err)
		return t, nil, "", false
	}
	i := slices.IndexFunc(vs, func(v history.Version) bool { return v.ID != "" && v.ID == id })
	if i < 0 {
		s.failErr(w, r, se, p, id, history.ErrUnknownVersion)
		return t, nil, "", false
	}
	return target{Path: p, Crumbs: fileCrumbs(p), Version: vs[i]}, pt, pkey, true
}

// confirmRestore is the confirmation of a restore: what it will write, and
// the change it makes to the current content.
func (s *Server) confirmRestore(w http.ResponseWriter, r *http.Request, se *session) {
	t, _, _, ok := s.action(w, r, se)
	if !ok {
		return
	}
	v := t.Version
	if v.Op == history.OpDeleted || v.Redacted != nil {
		s.fail(w, r, se, http.StatusConflict, msgNoContent(v.ID))
		return
	}
	key, _ := memory.Resolve(t.Path)
	diff, err := s.diffToVersion(r, se, key, v.ID)
	if err != nil {
		s.failErr(w, r, se, t.Path, v.ID, err)
		return
	}
	t.Diff = diff
	t.Message = msgConfirmRestore(t.Path, v.ID, formatBytes(v.Size), formatTime(v.Time), v.Actor, se.who)
	s.render(w, r, http.StatusOK, "restore", se, page{Title: "Restore " + t.Path, Data: t})
}

// diffToVersion is the diff from the current content of the file at key
// (empty when there is none) to its version id.
func (s *Server) diffToVersion(r *http.Request, se *session, key, id string) ([]diffLine, error) {
	b, vb, err := s.content(r, se, key, id)
	if err != nil {
		return nil, err
	}
	a, err := se.scope.handler.ReadFile(r.Context(), memory.PathOf(key))
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	return diffLines(history.UnifiedDiff(memory.PathOf(key), vb.Path+"@"+id, a, b)), nil
}

func isNotFound(err error) bool {
	me, ok := err.(*memory.Error)
	return ok && me.Kind == memory.ErrNotFound
}

// restore writes a version back (history.Restore through the session's
// memory handler, so every rule of the tree holds), recorded with the
// person as its actor.
func (s *Server) restore(w http.ResponseWriter, r *http.Request, se *session) {
	t, pt, pkey, ok := s.action(w, r, se)
	if !ok {
		return
	}
	ctx := memory.WithActor(r.Context(), se.who)
	h, tenant := se.scope.handler, se.scope.tenant
	nv, err := pt.hist.Restore(ctx, pkey, t.Version.ID, func(ctx context.Context, key string, data []byte, ifVersion string) error {
		k, ok := tenantKey(tenant, pt.topKey(key))
		if !ok { // not reached: key is pkey
			return &memory.Error{Kind: memory.ErrNotFound, Msg: msgNoFile(t.Path)}
		}
		_, err := h.Write(ctx, memory.PathOf(k), data, ifVersion)
		return err
	})
	if err != nil {
		s.failErr(w, r, se, t.Path, t.Version.ID, err)
		return
	}
	t.Message = msgRestored(t.Path, t.Version.ID, nv.ID)
	s.render(w, r, http.StatusOK, "done", se, page{Title: "Restored " + t.Path, Data: t})
}

// confirmRedact is the confirmation of a redaction: every version whose
// content it erases, or why it cannot be done.
func (s *Server) confirmRedact(w http.ResponseWriter, r *http.Request, se *session) {
	t, _, _, ok := s.action(w, r, se)
	if !ok {
		return
	}
	v := t.Version
	if v.Op == history.OpDeleted || v.Redacted != nil {
		s.fail(w, r, se, http.StatusConflict, msgNoContent(v.ID))
		return
	}
	key, _ := memory.Resolve(t.Path)
	vs, err := s.versions(r, se, key)
	if err != nil {
		s.failErr(w, r, se, t.Path, v.ID, err)
		return
	}
	var ids []string
	for _, o := range vs {
		if o.ID != "" && o.Redacted == nil && o.Op != history.OpDeleted && o.SHA256 == v.SHA256 {
			if o.Current {
				t.Blocked = true
			}
			ids = append(ids, o.ID)
		}
	}
	if t.Blocked {
		t.Message = msgCurrentContent(v.ID)
	} else {
		t.Message = msgConfirmRedact(t.Path, ids, se.who)
	}
	s.render(w, r, http.StatusOK, "redact", se, page{Title: "Redact " + t.Path, Data: t})
}

// redact erases the version's content (history.Redact), recorded with the
// person as the redactor.
func (s *Server) redact(w http.ResponseWriter, r *http.Request, se *session) {
	t, pt, pkey, ok := s.action(w, r, se)
	if !ok {
		return
	}
	vs, err := pt.hist.Redact(memory.WithActor(r.Context(), se.who), pkey, t.Version.ID)
	if err != nil {
		s.failErr(w, r, se, t.Path, t.Version.ID, err)
		return
	}
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	t.Message = msgRedacted(t.Path, ids)
	s.render(w, r, http.StatusOK, "done", se, page{Title: "Redacted " + t.Path, Data: t})
}
