package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

// SearchToolName is the name of the search tool a Server offers when
// Options.Search is set.
const SearchToolName = search.ToolName

// searchTool is the definition of memory_search: read-only, idempotent,
// over the memory store only. Its texts are docs/spec.md's "Search".
func searchTool() *mcp.Tool {
	readOnly, openWorld := true, false
	return &mcp.Tool{
		Name:        search.ToolName,
		Title:       "Memory search",
		Description: search.ToolDescription,
		InputSchema: json.RawMessage(search.InputSchema),
		Annotations: &mcp.ToolAnnotations{
			Title:          "Memory search",
			ReadOnlyHint:   readOnly,
			IdempotentHint: true,
			OpenWorldHint:  &openWorld,
		},
	}
}

// searchHandler answers memory_search calls over x: the result text as one
// text content, and on success search.Results as the structured content.
// Like a memory command, a search runs detached from the request's
// cancellation, bounded by the command timeout.
func (s *Server) searchHandler(x *search.Index) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !s.begin() {
			return toolResult(shuttingDown), nil
		}
		defer s.end()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer cancel()
		if s.actor != "" {
			ctx = blob.WithActor(ctx, s.actor)
		}
		text, res, isError := x.Run(ctx, []byte(req.Params.Arguments))
		out := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
		if !isError {
			out.StructuredContent = res
		}
		return out, nil
	}
}

// TenantSearch returns the handler of tenant t, as TenantHandler does, and
// a search index over the same tree (its prefix and mounts, read-only ones
// included) that the handler keeps current (search.Index.Observer, chained
// before opts.Observer). Pass the index as Options.Search.
func TenantSearch(store blob.Store, t *Tenant, opts memory.Options, so *search.Options) (*memory.Handler, *search.Index, error) {
	ts, err := tenantStore(store, t)
	if err != nil {
		return nil, nil, err
	}
	o := search.Options{}
	if so != nil {
		o = *so
	}
	if o.MaxFileBytes == 0 {
		o.MaxFileBytes = opts.MaxFileBytes // 0: the store's, as the handler's
	}
	idx := search.New(ts, &o)
	opts.Observer = idx.Observer(opts.Observer)
	if t != nil && t.ReadOnly {
		opts.ReadOnly = true
	}
	h, err := memory.New(ts, opts)
	if err != nil {
		return nil, nil, err
	}
	return h, idx, nil
}
