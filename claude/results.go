package claude

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cloudmem/cloudmem/memory"
)

// ToolResults runs the memory calls of msg, a response of the Messages API,
// through h and returns the user message that answers them: one tool_result
// block per memory tool_use block, in the order of the calls, each with the
// call's tool_use_id. A result's content is its text, or one image block;
// is_error is true for an error result and left out otherwise. The calls run
// one after another.
//
// Tool calls to other tools are left to the caller, who appends their
// tool_result blocks to the returned message's OfUser.Content, since one
// user message has to answer the whole turn.
//
// ok is false, and nothing runs, when msg has no memory call to answer: when
// it has none, or when it did not stop for tool use. Like the SDK's tool
// runner, ToolResults does not run the calls of a turn cut short (max_tokens:
// the last call's input may be incomplete) or refused, and it skips calls
// that come before a "fallback" block, which belong to an attempt the API
// replaced. With a nil h, every memory call gets the error result of a
// storage failure.
func ToolResults(ctx context.Context, h *memory.Handler, msg *anthropic.BetaMessage) (reply anthropic.BetaMessageParam, ok bool) {
	if msg == nil || msg.StopReason != anthropic.BetaStopReasonToolUse {
		return anthropic.BetaMessageParam{}, false
	}
	first := 0
	for i, block := range msg.Content {
		if block.Type == "fallback" {
			first = i + 1
		}
	}
	var results []anthropic.BetaContentBlockParamUnion
	for _, block := range msg.Content[first:] {
		if block.Type != "tool_use" || block.Name != ToolName {
			continue
		}
		// block.Input is the input exactly as the API sent it.
		r := execute(ctx, h, block.Input)
		result := anthropic.BetaToolResultBlockParam{ToolUseID: block.ID, Content: resultContent(r)}
		if r.IsError {
			result.IsError = anthropic.Bool(true)
		}
		results = append(results, anthropic.BetaContentBlockParamUnion{OfToolResult: &result})
	}
	if len(results) == 0 {
		return anthropic.BetaMessageParam{}, false
	}
	return anthropic.NewBetaUserMessage(results...), true
}
