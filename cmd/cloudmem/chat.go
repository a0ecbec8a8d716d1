package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/claude"
	"github.com/cloudmem/cloudmem/memory"
)

// Defaults of cloudmem chat.
const (
	defaultChatModel     = anthropic.ModelClaudeSonnet5_5
	defaultChatMaxTokens = 4096
)

// maxChatLine is the longest line chat reads as one message.
const maxChatLine = 1 << 20

// The environment variables chat reads: the names the SDK reads, read here
// through the cli's getenv so that a test can set them.
const (
	apiKeyEnv  = "ANTHROPIC_API_KEY"
	baseURLEnv = "ANTHROPIC_BASE_URL" // the API's address; the SDK's default when empty
)

func init() { register(newChatCmd) }

// newChatCmd is "cloudmem chat": a conversation with Claude in the
// terminal, in which Claude uses the memory tool on the store. Each line of
// stdin is a user message; chat prints Claude's text and one line for each
// memory call, and runs the calls through a memory.Handler, as the actor
// --actor names (default user@host).
//
// It exits 0 at the end of stdin; 1 when ANTHROPIC_API_KEY is not set (a
// configuration error, reported in one line before anything else happens),
// when the store cannot be opened or when a request fails; 2 for bad flags.
func newChatCmd(a *app) *cobra.Command {
	var (
		model     string
		maxTokens int64
		actor     string
	)
	cmd := &cobra.Command{
		Use:   "chat [--model MODEL] [--max-tokens N] [--actor NAME]",
		Short: "Chat with Claude, which keeps its memory in the store",
		Long: "Chats with Claude, which keeps its memory in the store with the memory tool. Each line of\n" +
			"stdin is a message; Claude's answers and its memory calls are printed. Old tool results are\n" +
			"cleared from the context as it grows, never the memory tool's.\n\n" +
			"Needs " + apiKeyEnv + ". " + baseURLEnv + ", when set, is the API's address.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxTokens < 1 {
				return usageErrorf("--max-tokens %d: want a positive number", maxTokens)
			}
			key := a.getenv(apiKeyEnv)
			if key == "" {
				return fmt.Errorf("%s is not set; chat needs an Anthropic API key", apiKeyEnv)
			}
			ctx := a.withActor(cmd.Context(), actor)
			h, done, err := a.openHandler(ctx, readWrite, memory.Options{})
			if err != nil {
				return err
			}
			defer done()
			return a.chat(ctx, h, key, model, maxTokens)
		},
	}
	cmd.Flags().StringVar(&model, "model", defaultChatModel, "the Claude `MODEL` to talk to")
	cmd.Flags().Int64Var(&maxTokens, "max-tokens", defaultChatMaxTokens, "at most `N` tokens in one response")
	addActorFlag(cmd, &actor)
	return cmd
}

// chat holds the conversation of newChatCmd with the API key key.
func (a *app) chat(ctx context.Context, h *memory.Handler, key, model string, maxTokens int64) error {
	opts := []option.RequestOption{option.WithAPIKey(key)}
	if base := a.getenv(baseURLEnv); base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	client := anthropic.NewClient(opts...)
	thread := client.Beta.Messages.NewThread(chatParams(model, maxTokens))
	tools := []anthropic.BetaTool{claude.NewTool(h)}

	interactive := isTerminal(a.stdin)
	if interactive {
		fmt.Fprintf(a.stdout, "Chatting with %s, which keeps its memory in the store. End with Ctrl-D.\n", model)
	}
	in := bufio.NewScanner(a.stdin)
	in.Buffer(nil, maxChatLine)
	for {
		if interactive {
			fmt.Fprint(a.stdout, "> ")
		}
		if !in.Scan() {
			break
		}
		text := strings.TrimSpace(in.Text())
		if text == "" {
			continue
		}
		// One runner per user turn, over the thread that holds the
		// conversation: it runs until Claude stops calling tools.
		thread.Append(anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(text)))
		runner := thread.NewToolRunner(tools)
		for msg, err := range runner.All(ctx) {
			if err != nil {
				return err
			}
			printReply(a.stdout, msg)
		}
		if last := runner.LastMessage(); last != nil && last.StopReason == anthropic.BetaStopReasonMaxTokens {
			fmt.Fprintf(a.stderr, "cloudmem chat: the response was cut off at %d tokens (--max-tokens)\n", maxTokens)
		}
	}
	if interactive {
		fmt.Fprintln(a.stdout)
	}
	if err := in.Err(); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	return nil
}

// chatParams returns what every request of a chat carries: the model, the
// memory tool, the context editing that pairs with it and the beta both need.
// When the API cannot keep the conversation on a message thread, the
// requests carry the whole conversation instead.
func chatParams(model string, maxTokens int64) anthropic.BetaMessageThreadCreateParams {
	return anthropic.BetaMessageThreadCreateParams{
		Model:                      model,
		MaxTokens:                  maxTokens,
		Tools:                      []anthropic.BetaToolUnionParam{claude.ToolParam()},
		ContextManagement:          claude.ContextManagement(),
		Betas:                      []anthropic.AnthropicBeta{claude.Beta},
		UnsupportedRequestBehavior: anthropic.BetaMessageThreadUnsupportedRequestBehaviorContinueUnthreaded,
	}
}

// printReply writes the text blocks of msg, each on its own lines, and one
// line for each tool call, such as "[memory: view /memories]".
func printReply(w io.Writer, msg *anthropic.BetaMessage) {
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			fmt.Fprintln(w, block.Text)
		case "tool_use":
			fmt.Fprintf(w, "[%s]\n", describeCall(block.Name, block.Input))
		}
	}
}

// describeCall summarizes a tool call: "memory: create /memories/a.md",
// "memory: rename /memories/a.md -> /memories/b.md", or the tool's name
// alone when the call is not a memory call with string fields.
func describeCall(name string, input json.RawMessage) string {
	var in struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		OldPath string `json:"old_path"`
		NewPath string `json:"new_path"`
	}
	if name != claude.ToolName || json.Unmarshal(input, &in) != nil || in.Command == "" {
		return name
	}
	if in.Command == "rename" {
		return fmt.Sprintf("%s: rename %s -> %s", name, in.OldPath, in.NewPath)
	}
	return strings.TrimSpace(fmt.Sprintf("%s: %s %s", name, in.Command, in.Path))
}

// isTerminal reports whether r is a terminal (a character device), where
// chat greets the user and prompts for each line.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
