package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ToolName is the name of the search tool, in MCP (package mcpserver) and
// in the Messages API (package claude).
const ToolName = "memory_search"

// ToolDescription is the search tool's description (docs/spec.md "Search").
const ToolDescription = `Search your memory files for words. Returns the files that match best, each with the numbers of its matching lines and its best line, matches marked « ». Case and accents are ignored; "two words" in quotes is a phrase; a word ending in * matches every word that starts with it. Then read a file with the memory tool's view, with view_range for the lines you need.`

// The descriptions of the tool's input fields.
const (
	QueryDescription = "The words to look for."
	PathDescription  = "The directory or file to search: /memories, the default, or a path under it."
	LimitDescription = "How many files to return, best first; 10 if left out."
)

// InputSchema is the JSON schema of the tool's input.
const InputSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "description": "` + QueryDescription + `"},
    "path": {"type": "string", "description": "` + PathDescription + `"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "` + LimitDescription + `"}
  },
  "required": ["query"]
}`

// ErrInvalidInput: the tool's input is not an object of its fields.
var ErrInvalidInput = errors.New(`The search input must be an object with "query" (a string of words) and optionally "path" (a string) and "limit" (an integer from 1 to 100).`)

// ParseInput decodes the tool's input: {"query": ..., "path": ...,
// "limit": ...}. Unknown fields are ignored; a missing query, a field of the
// wrong type or anything but one object is ErrInvalidInput.
func ParseInput(input []byte) (Request, error) {
	var in struct {
		Query *string `json:"query"`
		Path  *string `json:"path"`
		Limit *int    `json:"limit"`
	}
	if err := json.Unmarshal(input, &in); err != nil || in.Query == nil || bytes.TrimSpace(input)[0] != '{' {
		return Request{}, ErrInvalidInput
	}
	req := Request{Query: *in.Query}
	if in.Path != nil {
		req.Dir = *in.Path
	}
	if in.Limit != nil {
		req.Limit = *in.Limit
		if req.Limit == 0 { // Request's 0 is the default; the tool's is out of range
			return Request{}, fmt.Errorf("%w; got 0.", ErrLimit)
		}
	}
	return req, nil
}

// Run answers one call of the tool: the text the model reads, the results
// (zero on error) and whether it is an error. It never panics.
func (x *Index) Run(ctx context.Context, input []byte) (text string, res Results, isError bool) {
	req, err := ParseInput(input)
	if err == nil {
		res, err = x.Search(ctx, req)
	}
	if err != nil {
		return ErrorText(err), Results{}, true
	}
	return res.Text(), res, false
}
