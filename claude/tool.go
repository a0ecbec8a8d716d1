package claude

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cloudmem/cloudmem/memory"
)

// ToolName is the memory tool's name: in its definition, in the model's
// tool_use blocks and in context editing's exclude_tools.
const ToolName = "memory"

// Beta is the beta flag of requests that carry the memory tool, and of the
// context editing in ContextManagement: pass it in the request's Betas.
const Beta = anthropic.AnthropicBetaContextManagement2025_06_27

// errorPrefix starts every error text of a memory.Result, and the SDK's tool
// runner puts it before the text of every error a tool returns.
const errorPrefix = "Error: "

// ToolParam returns the memory tool's definition for a request's Tools: it
// marshals as {"name": "memory", "type": "memory_20250818"}.
func ToolParam() anthropic.BetaToolUnionParam {
	return anthropic.BetaToolUnionParam{OfMemoryTool20250818: &anthropic.BetaMemoryTool20250818Param{}}
}

// ContextManagement returns the context editing that pairs with the memory
// tool: once the context grows past the API's default trigger, old tool
// results are cleared, except the memory tool's. What the model saved to
// memory stays reachable; what the memory tool read stays in view. Requests
// that carry it need Beta.
func ContextManagement() anthropic.BetaContextManagementConfigParam {
	return anthropic.BetaContextManagementConfigParam{
		Edits: []anthropic.BetaContextManagementConfigEditUnionParam{{
			OfClearToolUses20250919: &anthropic.BetaClearToolUses20250919EditParam{
				ExcludeTools: []string{ToolName},
			},
		}},
	}
}

// Tool is the memory tool for the SDK's tool runner: an anthropic.BetaTool
// named "memory" that runs each call through a memory.Handler. It is safe for
// concurrent use, as the runner needs: it runs the tool calls of one turn
// concurrently.
//
// Put ToolParam in the request's Tools as well (see the package
// documentation); Description and InputSchema only serve when it is missing.
type Tool struct {
	h *memory.Handler
}

var _ anthropic.BetaTool = (*Tool)(nil)

// NewTool returns a Tool backed by h. With a nil h, every call gets the
// error result of a storage failure.
func NewTool(h *memory.Handler) *Tool {
	return &Tool{h: h}
}

// Name returns ToolName.
func (t *Tool) Name() string { return ToolName }

// Description returns a short description of the memory tool, for a runner
// that has to declare it as a custom tool.
func (t *Tool) Description() string {
	return "Your persistent memory: a directory of text files under /memories that outlives this " +
		"conversation. Commands: view (a directory listing, or a file with line numbers), create, " +
		"str_replace, insert, delete and rename."
}

// InputSchema returns the JSON schema of the memory commands' input, for a
// runner that has to declare the memory tool as a custom tool.
func (t *Tool) InputSchema() anthropic.BetaToolInputSchemaParam {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	return anthropic.BetaToolInputSchemaParam{
		Properties: map[string]any{
			"command": map[string]any{
				"type": "string",
				"enum": []string{"view", "create", "str_replace", "insert", "delete", "rename"},
			},
			"path": str("The file or directory: /memories or a path under it (all but rename)."),
			"view_range": map[string]any{
				"type":        "array",
				"items":       map[string]any{"type": "integer"},
				"description": "view of a file: [first, last] line to show; last -1 means the end.",
			},
			"file_text":   str("create: the whole content of the new file."),
			"old_str":     str("str_replace: the text to replace; it must occur exactly once."),
			"new_str":     str("str_replace: the replacement text (empty when left out)."),
			"insert_line": map[string]any{"type": "integer", "description": "insert: the line after which the text goes (0: at the top)."},
			"insert_text": str("insert: the text to insert."),
			"old_path":    str("rename: the file or directory to move."),
			"new_path":    str("rename: where it goes."),
		},
		Required: []string{"command"},
	}
}

// Execute runs one memory call. input is the tool_use block's input.
//
// For a success it returns the result's content and a nil error. For an error
// result it returns no content and an error whose text is the result text
// without its leading "Error: ", because the runner sends "Error: " followed by
// the error's text, with is_error true: the model reads the handler's text
// exactly, prefixed once. Execute never fails otherwise.
//
// The runner passes the input re-encoded from the value it decoded, not the
// bytes the API sent: a number such as 2.0 arrives as 2 (and so passes as an
// integer), and an integer past 2^53 loses precision. ToolResults passes the
// input exactly as sent.
func (t *Tool) Execute(ctx context.Context, input json.RawMessage) ([]anthropic.BetaToolResultBlockParamContentUnion, error) {
	r := execute(ctx, t.h, input)
	if r.IsError {
		return nil, &resultError{text: strings.TrimPrefix(r.Text, errorPrefix)}
	}
	return resultContent(r), nil
}

// noHandler is the result of a call to a nil Handler.
var noHandler = memory.Result{Text: errorPrefix + "The memory storage failed: no store is configured", IsError: true}

// execute runs one memory call through h; a nil h gets noHandler.
func execute(ctx context.Context, h *memory.Handler, input []byte) memory.Result {
	if h == nil {
		return noHandler
	}
	return h.Execute(ctx, input)
}

// resultError is an error result on its way through the tool runner. Its
// text lacks the "Error: " that the runner puts back.
type resultError struct {
	text string
}

func (e *resultError) Error() string { return e.text }

// resultContent returns the content blocks of r: one image block for an
// image, otherwise one text block.
func resultContent(r memory.Result) []anthropic.BetaToolResultBlockParamContentUnion {
	if r.Image != nil {
		return []anthropic.BetaToolResultBlockParamContentUnion{{
			OfImage: &anthropic.BetaImageBlockParam{
				Source: anthropic.BetaImageBlockParamSourceUnion{
					OfBase64: &anthropic.BetaBase64ImageSourceParam{
						Data:      base64.StdEncoding.EncodeToString(r.Image.Data),
						MediaType: anthropic.BetaBase64ImageSourceMediaType(r.Image.MediaType),
					},
				},
			},
		}}
	}
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: r.Text}}}
}
