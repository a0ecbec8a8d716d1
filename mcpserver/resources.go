package mcpserver

import (
	"context"
	"errors"
	"net/url"
	"path"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/memory"
)

// URIScheme is the scheme of the memory files' resource URIs.
const URIScheme = "memory"

// listPageSize is the most resources one resources/list page holds.
const listPageSize = 1000

// private is the cache hint of every list and read: a tenant's memory is
// its own, and may change at any moment.
var private = mcp.Cacheable{TTLMs: 0, CacheScope: "private"}

// URIOf returns the resource URI of the memory file at path (a normalised
// /memories path): /memories/notes/a b.md is memory:///memories/notes/a%20b.md.
func URIOf(path string) string {
	return (&url.URL{Scheme: URIScheme, Path: path}).String()
}

// pathOfURI returns the memory path a resource URI names, or false when uri
// is not a memory resource URI. The path is not validated here: the handler
// does it, as for every path.
func pathOfURI(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != URIScheme || u.Opaque != "" || u.User != nil || u.Host != "" ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || !strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	return u.Path, true
}

func resourceTemplate() *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{
		Name:        "memory file",
		Title:       "Memory file",
		Description: "A file of the model's memory, by its /memories path.",
		URITemplate: URIScheme + ":///memories/{+path}",
	}
}

// listMiddleware answers resources/list with the memory files, which the
// SDK's own list (of resources registered one by one) cannot hold: the
// store changes under the server.
func (s *Server) listMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		var cursor string
		if r, ok := req.(*mcp.ListResourcesRequest); ok && r.Params != nil {
			cursor = r.Params.Cursor
		}
		return s.listResources(ctx, cursor)
	}
}

// listResources lists the memory files after cursor (the key of the last
// file of the previous page), in key order.
func (s *Server) listResources(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
	files, err := s.h.Files(ctx, "/memories")
	if err != nil {
		return nil, s.resourceError(err, "/memories")
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, Cacheable: private}
	last := ""
	for _, f := range files {
		if f.Key <= cursor {
			continue
		}
		if len(res.Resources) == listPageSize {
			res.NextCursor = last
			break
		}
		last = f.Key
		res.Resources = append(res.Resources, &mcp.Resource{
			URI:      URIOf(f.Path),
			Name:     f.Path,
			MIMEType: mimeTypes[strings.ToLower(path.Ext(f.Path))], // "" when only the content could tell
			Size:     f.Size,
		})
	}
	return res, nil
}

// readResource returns a memory file's exact bytes: as text when they are
// UTF-8 and the file is not an image, else as a blob.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := pathOfURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := s.h.ReadFile(ctx, p)
	if err != nil {
		return nil, s.resourceError(err, uri)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType(p, data)}
	if isText(p, data) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}, Cacheable: private}, nil
}

// resourceError is the JSON-RPC error for a failed list or read: "not
// found" for anything but a storage failure, whose short text (which names
// no credential, host or key) the client may see.
func (s *Server) resourceError(err error, uri string) error {
	var e *memory.Error
	if errors.As(err, &e) && errors.Is(err, memory.ErrStorage) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: e.Error()}
	}
	if errors.As(err, &e) {
		return mcp.ResourceNotFoundError(uri)
	}
	s.log.Error("mcpserver: resource", "uri", uri, "err", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}
}

// mimeTypes are the media types of the file names a memory commonly holds.
var mimeTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".json": "application/json",
	".yaml": "application/yaml", ".yml": "application/yaml", ".csv": "text/csv", ".html": "text/html",
	".xml": "application/xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp",
}

// mimeType is the media type of the file at p holding data: by its name,
// else text/plain when data is UTF-8, else application/octet-stream.
func mimeType(p string, data []byte) string {
	if t, ok := mimeTypes[strings.ToLower(path.Ext(p))]; ok {
		return t
	}
	if utf8.Valid(data) {
		return "text/plain"
	}
	return "application/octet-stream"
}

func isText(p string, data []byte) bool {
	return !strings.HasPrefix(mimeType(p, data), "image/") && utf8.Valid(data)
}

// subscriptions are the resource URIs clients subscribed to, each with its
// path, so that a change to a directory reaches the files beneath it.
type subscriptions struct {
	mu   sync.Mutex
	uris map[string]string // URI -> normalised path
	n    map[string]int    // URI -> subscribing sessions
}

func (s *Server) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	p, ok := pathOfURI(req.Params.URI)
	if !ok {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	key, err := memory.Resolve(p)
	if err != nil {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	s.subs.uris[req.Params.URI] = memory.PathOf(key)
	s.subs.n[req.Params.URI]++
	return nil
}

func (s *Server) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if s.subs.n[req.Params.URI]--; s.subs.n[req.Params.URI] <= 0 {
		delete(s.subs.n, req.Params.URI)
		delete(s.subs.uris, req.Params.URI)
	}
	return nil
}

// notifyChanged sends notifications/resources/updated for every subscribed
// resource that a command changed (memory.Result.Changed): the file a path
// names, or every file beneath a directory it names.
func (s *Server) notifyChanged(ctx context.Context, changed []string) {
	if len(changed) == 0 {
		return
	}
	s.subs.mu.Lock()
	if len(s.subs.uris) == 0 {
		s.subs.mu.Unlock()
		return
	}
	var hit []string
	for _, path := range changed {
		for uri, p := range s.subs.uris {
			if p == path || strings.HasPrefix(p, path+"/") {
				hit = append(hit, uri)
			}
		}
	}
	s.subs.mu.Unlock()
	for _, uri := range hit {
		if err := s.mcp.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			s.log.Warn("mcpserver: resource update notification", "uri", uri, "err", err)
		}
	}
}
