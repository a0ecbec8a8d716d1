package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// textResult is a tool result of one text content, which marshals itself
// to exactly the bytes the SDK writes for the same *mcp.CallToolResult
// (TestTextResultWire checks this). The SDK marshals a CallToolResult with
// reflection and re-validates the text's JSON once per nesting level
// (content, result, message); a view answer is a few KB, so that is most of
// the SDK's CPU time per call. This type skips one of those passes and the
// reflection; the SDK still validates the bytes it gets once more.
//
// The SDK documents mcp.ResultBase as the way to write a result type of
// one's own.
type textResult struct {
	mcp.ResultBase
	text    string
	isError bool
}

// Result field names and order, as mcp.CallToolResult and mcp.TextContent
// declare them.
const (
	textResultHead = `{"content":[{"type":"text","text":`
	textResultTail = `}]}`
	textResultErr  = `}],"isError":true}`
)

// MarshalJSON writes {"content":[{"type":"text","text":...}]}, with
// "isError":true after the content on an error, as the SDK does.
func (r *textResult) MarshalJSON() ([]byte, error) {
	// encoding/json's string form, HTML escaping included, is what
	// mcp.TextContent.MarshalJSON produces.
	text, err := json.Marshal(r.text)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(textResultHead)+len(text)+len(textResultErr))
	b = append(b, textResultHead...)
	b = append(b, text...)
	if r.isError {
		return append(b, textResultErr...), nil
	}
	return append(b, textResultTail...), nil
}

// fastResult returns r as a textResult when that writes the same bytes: a
// result of one text content and nothing else, for a request without
// _meta. A request with _meta may select the 2026-07-28 protocol, whose
// results the SDK annotates after the handler returns (resultType,
// serverInfo); those keep the SDK's own type, as does every other result.
func fastResult(req mcp.Request, r *mcp.CallToolResult) mcp.Result {
	if r == nil || len(r.Meta) != 0 || len(r.Content) != 1 || r.StructuredContent != nil || r.InputRequests != nil ||
		r.RequestState != "" || r.GetError() != nil || r.NeedsInput() {
		return r
	}
	if p := req.GetParams(); p == nil || len(p.GetMeta()) != 0 {
		return r
	}
	c, ok := r.Content[0].(*mcp.TextContent)
	if !ok || len(c.Meta) != 0 || c.Annotations != nil {
		return r
	}
	return &textResult{text: c.Text, isError: r.IsError}
}

// resultMiddleware hands the SDK a textResult for each text result of the
// memory tool (see fastResult).
func resultMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok {
			return fastResult(req, r), nil
		}
		return res, nil
	}
}
