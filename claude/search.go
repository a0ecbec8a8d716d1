package claude

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cloudmem/cloudmem/search"
)

// SearchToolName is the search tool's name: "memory_search".
const SearchToolName = search.ToolName

// SearchTool is the memory search tool (package search) for the SDK's tool
// runner, to offer beside Tool: a custom tool named "memory_search" whose
// description and input are docs/spec.md's "Search". The model finds files
// with it, then reads them with the memory tool's view. It is safe for
// concurrent use.
//
//	x := search.New(store, nil)
//	h, err := memory.New(store, memory.Options{Observer: x.Observer(nil)})
//	...
//	tools := []anthropic.BetaTool{claude.NewTool(h), claude.NewSearchTool(x)}
//	// Tools: []anthropic.BetaToolUnionParam{claude.ToolParam(), claude.SearchToolParam()}
type SearchTool struct {
	x *search.Index
}

var _ anthropic.BetaTool = (*SearchTool)(nil)

// NewSearchTool returns a SearchTool over x. Give x's Observer to the
// Handler of the memory tool, so that each search finds what the model just
// wrote.
func NewSearchTool(x *search.Index) *SearchTool { return &SearchTool{x: x} }

// SearchToolParam returns the search tool's definition for a request's
// Tools (a custom tool; the runner declares the same one without it).
func SearchToolParam() anthropic.BetaToolUnionParam {
	t := &SearchTool{}
	return anthropic.BetaToolUnionParam{OfTool: &anthropic.BetaToolParam{
		Name:        SearchToolName,
		Description: anthropic.String(t.Description()),
		InputSchema: t.InputSchema(),
	}}
}

// Name returns SearchToolName.
func (t *SearchTool) Name() string { return SearchToolName }

// Description returns search.ToolDescription.
func (t *SearchTool) Description() string { return search.ToolDescription }

// InputSchema returns the schema of search.InputSchema.
func (t *SearchTool) InputSchema() anthropic.BetaToolInputSchemaParam {
	return anthropic.BetaToolInputSchemaParam{
		Properties: map[string]any{
			"query": map[string]any{"type": "string", "description": search.QueryDescription},
			"path":  map[string]any{"type": "string", "description": search.PathDescription},
			"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": search.MaxLimit, "description": search.LimitDescription},
		},
		Required: []string{"query"},
	}
}

// Execute answers one search, as Tool.Execute answers a memory command: the
// result text as one text block, or for an error no content and an error
// whose text lacks the "Error: " the runner puts back. A SearchTool with a
// nil index answers every call with the storage failure of a Tool with no
// handler.
func (t *SearchTool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	if t.x == nil {
		return nil, &resultError{text: strings.TrimPrefix(noHandler.Text, errorPrefix)}
	}
	text, _, isError := t.x.Run(ctx, input)
	if isError {
		return nil, &resultError{text: strings.TrimPrefix(text, errorPrefix)}
	}
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: text}}}, nil
}
