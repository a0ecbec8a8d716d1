package claude_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cloudmem/cloudmem/claude"
)

// TestRunnerPlayback runs the SDK's tool runner with a Tool against the
// playback server, on a message thread (the runner's default) and without:
// the loop runs to the final message, the requests declare the memory tool
// itself (not a custom tool) and carry our results exactly, and the file the
// model created is in the store.
func TestRunnerPlayback(t *testing.T) {
	for _, disableThread := range []bool{false, true} {
		name := "thread"
		if disableThread {
			name = "no thread"
		}
		t.Run(name, func(t *testing.T) {
			store, h := seededHandler(t)
			p, client := newPlayback(t, "turn1.json", "turn2.json", "turn3.json")
			runner := client.Beta.Messages.NewToolRunner([]anthropic.BetaTool{claude.NewTool(h)}, anthropic.BetaToolRunnerParams{
				BetaMessageNewParams: requestParams(),
				DisableThread:        disableThread,
			})
			final, err := runner.RunToCompletion(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if final.ID != "msg_01PlaybackTurn3" || final.StopReason != anthropic.BetaStopReasonEndTurn {
				t.Errorf("the final message is %s (%s), want msg_01PlaybackTurn3 (end_turn)", final.ID, final.StopReason)
			}
			checkPlayback(t, p.Requests(), store)
		})
	}
}

// TestToolParam checks the definition's wire form and that the SDK's runner
// sees the name "memory" in it, so it adds no custom tool of that name.
func TestToolParam(t *testing.T) {
	data, err := json.Marshal(claude.ToolParam())
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	checkJSON(t, "ToolParam", []any{got}, wantTools)
	if name := claude.ToolParam().GetName(); name == nil || *name != claude.ToolName {
		t.Errorf("ToolParam().GetName() = %v, want %q", name, claude.ToolName)
	}
}

// TestContextManagement checks the context editing's wire form.
func TestContextManagement(t *testing.T) {
	data, err := json.Marshal(claude.ContextManagement())
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	checkJSON(t, "ContextManagement", got, wantContextManagement)
}

// TestToolExecute calls a Tool directly: a success is its content and no
// error; an error result is no content and an error whose text lacks the
// "Error: " the runner puts back; an image is one base64 image block.
func TestToolExecute(t *testing.T) {
	_, h := seededHandler(t)
	tool := claude.NewTool(h)
	if tool.Name() != "memory" {
		t.Errorf("Name() = %q, want memory", tool.Name())
	}
	for _, tc := range []struct {
		input       string
		wantContent string // JSON; "null" for none
		wantErr     string
	}{
		{`{"command":"create","path":"/memories/a.md","file_text":"hi"}`,
			`[{"type":"text","text":"File created successfully at: /memories/a.md"}]`, ""},
		{`{"command":"view","path":"/memories/a.md"}`,
			`[{"type":"text","text":"Here's the content of /memories/a.md with line numbers:\n     1\thi"}]`, ""},
		{`{"command":"view","path":"/memories/nope"}`,
			`null`, "The path /memories/nope does not exist. Please provide a valid path."},
		{`{"command":"delete","path":"/memories/"}`,
			`null`, "Cannot delete the /memories directory itself"},
		{`{"command":"frobnicate"}`,
			`null`, "Unknown memory command: frobnicate. Expected one of: view, create, str_replace, insert, delete, rename"},
		{`{"command":"view","path":"/memories/pic.png"}`,
			`[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUg=="}}]`, ""},
	} {
		content, err := tool.Execute(context.Background(), json.RawMessage(tc.input))
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.wantErr {
			t.Errorf("Execute(%s) error = %q, want %q", tc.input, gotErr, tc.wantErr)
		}
		data, err := json.Marshal(content)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		checkJSON(t, "Execute("+tc.input+") content", got, tc.wantContent)
	}
}

// TestToolSchema checks the whole schema a runner falls back to when the
// request lacks ToolParam: every field the handler reads, command required.
func TestToolSchema(t *testing.T) {
	data, err := json.Marshal(claude.NewTool(nil).InputSchema())
	if err != nil {
		t.Fatal(err)
	}
	var got any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	checkJSON(t, "InputSchema", got, `{
		"type": "object",
		"required": ["command"],
		"properties": {
			"command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "delete", "rename"]},
			"path": {"type": "string", "description": "The file or directory: /memories or a path under it (all but rename)."},
			"view_range": {"type": "array", "items": {"type": "integer"}, "description": "view of a file: [first, last] line to show; last -1 means the end."},
			"file_text": {"type": "string", "description": "create: the whole content of the new file."},
			"old_str": {"type": "string", "description": "str_replace: the text to replace; it must occur exactly once."},
			"new_str": {"type": "string", "description": "str_replace: the replacement text (empty when left out)."},
			"insert_line": {"type": "integer", "description": "insert: the line after which the text goes (0: at the top)."},
			"insert_text": {"type": "string", "description": "insert: the text to insert."},
			"old_path": {"type": "string", "description": "rename: the file or directory to move."},
			"new_path": {"type": "string", "description": "rename: where it goes."}
		}
	}`)
}
