// Package claude connects a memory.Handler to the Claude Messages API through
// the official Go SDK (github.com/anthropics/anthropic-sdk-go/v2), which ships
// the memory tool's types but no handler for it.
//
// It provides three things:
//
//   - ToolParam, the memory tool's definition for a request's Tools
//     ({"type": "memory_20250818", "name": "memory"}), with Beta, the beta
//     flag requests that carry it need, and ContextManagement, the context
//     editing that pairs with it.
//   - Tool, an anthropic.BetaTool backed by a Handler, for the SDK's tool
//     runner (client.Beta.Messages.NewToolRunner).
//   - ToolResults, for a loop of your own: it answers every memory tool_use
//     of a response with one user message of tool_result blocks.
//
// Either way the model receives each memory.Result as it is: the result text
// (every error text starts with "Error: " exactly once) or an image block, and
// is_error set exactly when the Result says so.
//
// # With the tool runner
//
// Put ToolParam in the request's Tools and a Tool in the runner's tools: the
// runner then sends the memory tool's own definition and runs each memory
// call through the Handler. The runner runs the calls of one turn
// concurrently; a Handler is safe for that.
//
//	h, err := memory.New(store, memory.Options{})
//	...
//	runner := client.Beta.Messages.NewToolRunner(
//		[]anthropic.BetaTool{claude.NewTool(h)},
//		anthropic.BetaToolRunnerParams{BetaMessageNewParams: anthropic.BetaMessageNewParams{
//			Model:             anthropic.ModelClaudeSonnet5_5,
//			MaxTokens:         2048,
//			Betas:             []anthropic.AnthropicBeta{claude.Beta},
//			Tools:             []anthropic.BetaToolUnionParam{claude.ToolParam()},
//			ContextManagement: claude.ContextManagement(),
//			Messages:          messages,
//		}},
//	)
//	final, err := runner.RunToCompletion(ctx)
//
// Without ToolParam in Tools, the runner declares "memory" as a custom tool
// built from Tool's Description and InputSchema instead: the calls still work,
// but the model does not get the memory tool it was trained on.
//
// # In your own loop
//
//	for {
//		msg, err := client.Beta.Messages.New(ctx, params)
//		...
//		params.Messages = append(params.Messages, msg.ToParam())
//		reply, ok := claude.ToolResults(ctx, h, msg)
//		if !ok {
//			break // no memory call to answer
//		}
//		// Append the tool_result blocks of your other tools to
//		// reply.OfUser.Content here: one user message answers the turn.
//		params.Messages = append(params.Messages, reply)
//	}
package claude
