package claude_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/claude"
)

// TestToolResultsPlayback runs a loop of its own with ToolResults against
// the playback server: the loop ends at the final message, the requests
// carry the results exactly, and the file the model created is in the store.
func TestToolResultsPlayback(t *testing.T) {
	ctx := context.Background()
	store, h := seededHandler(t)
	p, client := newPlayback(t, "turn1.json", "turn2.json", "turn3.json")
	params := requestParams()
	var final *anthropic.BetaMessage
	for range 10 {
		msg, err := client.Beta.Messages.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		reply, ok := claude.ToolResults(ctx, h, msg)
		if !ok {
			final = msg
			break
		}
		params.Messages = append(params.Messages, reply)
	}
	if final == nil || final.ID != "msg_01PlaybackTurn3" {
		t.Fatalf("the loop ended with %v, want msg_01PlaybackTurn3", final)
	}
	checkPlayback(t, p.Requests(), store)
}

// TestToolResults checks which calls ToolResults answers, and that it leaves
// the rest alone.
func TestToolResults(t *testing.T) {
	const (
		create = `{"type": "tool_use", "id": "toolu_A", "name": "memory", "input": {"command": "create", "path": "/memories/a.md", "file_text": "A"}}`
		// insert_line 2.0 is not an integer (SPEC): the handler must see the
		// input as the API sent it.
		insert  = `{"type": "tool_use", "id": "toolu_B", "name": "memory", "input": {"command": "insert", "path": "/memories/a.md", "insert_line": 2.0, "insert_text": "x"}}`
		weather = `{"type": "tool_use", "id": "toolu_W", "name": "get_weather", "input": {"city": "Lyon"}}`
		text    = `{"type": "text", "text": "Noting that."}`
		// A fallback block: the calls before it belong to an attempt that
		// the API replaced.
		fallback = `{"type": "fallback", "from": {"model": "claude-sonnet-5-5"}, "to": {"model": "claude-opus-5-5"}, "trigger": {"type": "refusal"}}`
	)
	const (
		resultA = `{"type": "tool_result", "tool_use_id": "toolu_A", "content": [{"type": "text", "text": "File created successfully at: /memories/a.md"}]}`
		resultB = `{"type": "tool_result", "tool_use_id": "toolu_B", "is_error": true, "content": [{"type": "text", "text": "Error: Parameter ` + "`insert_line`" + ` must be an integer"}]}`
	)
	for _, tc := range []struct {
		name       string
		stopReason string
		content    string
		want       string // the reply's JSON, or "" for ok == false
		wantFile   bool   // whether /memories/a.md exists afterwards
	}{
		{"memory calls among others", "tool_use", text + "," + weather + "," + create + "," + insert,
			`{"role": "user", "content": [` + resultA + "," + resultB + `]}`, true},
		{"other tools only", "tool_use", text + "," + weather, "", false},
		{"no tool call", "end_turn", text, "", false},
		{"cut short", "max_tokens", text + "," + create, "", false},
		{"refused", "refusal", create, "", false},
		{"end_turn", "end_turn", create, "", false},
		{"after a fallback", "tool_use", insert + "," + fallback + "," + create,
			`{"role": "user", "content": [` + resultA + `]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store, h := seededHandler(t)
			var msg anthropic.BetaMessage
			raw := `{"id": "msg_X", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
				"content": [` + tc.content + `], "stop_reason": "` + tc.stopReason + `", "stop_sequence": null,
				"usage": {"input_tokens": 10, "output_tokens": 10}}`
			if err := json.Unmarshal([]byte(raw), &msg); err != nil {
				t.Fatal(err)
			}
			reply, ok := claude.ToolResults(context.Background(), h, &msg)
			if ok != (tc.want != "") {
				t.Fatalf("ok = %v, want %v", ok, tc.want != "")
			}
			if ok {
				data, err := json.Marshal(reply)
				if err != nil {
					t.Fatal(err)
				}
				var got any
				if err := json.Unmarshal(data, &got); err != nil {
					t.Fatal(err)
				}
				checkJSON(t, "reply", got, tc.want)
			}
			_, err := store.Stat(context.Background(), "a.md")
			if exists := err == nil; exists != tc.wantFile || (err != nil && !errors.Is(err, blob.ErrNotExist)) {
				t.Errorf("after ToolResults, Stat(a.md) = %v; want the file to exist: %v", err, tc.wantFile)
			}
		})
	}
	if _, ok := claude.ToolResults(context.Background(), nil, nil); ok {
		t.Error("ToolResults(nil message) is ok, want not")
	}
}

// TestNilHandler checks that a Tool or ToolResults without a Handler
// answers each call with a storage failure instead of panicking.
func TestNilHandler(t *testing.T) {
	const want = "The memory storage failed: no store is configured"
	content, err := claude.NewTool(nil).Execute(context.Background(), json.RawMessage(`{"command":"view","path":"/memories"}`))
	if content != nil || err == nil || err.Error() != want {
		t.Errorf("Execute with no handler = %v, %v; want no content and error %q", content, err, want)
	}

	var msg anthropic.BetaMessage
	raw := `{"id": "msg_X", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", "stop_reason": "tool_use",
		"content": [{"type": "tool_use", "id": "toolu_A", "name": "memory", "input": {"command": "view", "path": "/memories"}}]}`
	if err := json.Unmarshal([]byte(raw), &msg); err != nil {
		t.Fatal(err)
	}
	reply, ok := claude.ToolResults(context.Background(), nil, &msg)
	data, _ := json.Marshal(reply)
	var got any
	json.Unmarshal(data, &got)
	if !ok {
		t.Fatal("ToolResults with no handler: ok is false")
	}
	checkJSON(t, "reply", got, `{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_A", "is_error": true,
		"content": [{"type": "text", "text": "Error: `+want+`"}]}]}`)
}
