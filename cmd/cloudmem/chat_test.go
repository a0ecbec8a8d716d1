package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// Recorded Messages API responses for TestChat, written by hand from the
// API's documented response shape. The user says "I prefer tea. Remember
// that.": Claude views its memory, creates a file, then answers. The user
// then asks "What do I prefer?" and Claude answers.
var chatResponses = []string{
	`{"id": "msg_chat1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
	  "content": [
	    {"type": "text", "text": "Let me check my memory."},
	    {"type": "tool_use", "id": "toolu_c1", "name": "memory", "input": {"command": "view", "path": "/memories"}}
	  ],
	  "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 1320, "output_tokens": 40},
	  "context_management": {"applied_edits": []}}`,
	`{"id": "msg_chat2", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
	  "content": [
	    {"type": "tool_use", "id": "toolu_c2", "name": "memory", "input": {"command": "create", "path": "/memories/prefs.md", "file_text": "Prefers tea.\n"}}
	  ],
	  "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 1410, "output_tokens": 52},
	  "context_management": {"applied_edits": []}}`,
	`{"id": "msg_chat3", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
	  "content": [{"type": "text", "text": "Noted: you prefer tea."}],
	  "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 1490, "output_tokens": 9},
	  "context_management": {"applied_edits": []}}`,
	`{"id": "msg_chat4", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
	  "content": [{"type": "text", "text": "You prefer tea."}],
	  "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 1512, "output_tokens": 6},
	  "context_management": {"applied_edits": []}}`,
}

// chatRequest is one request the playback server received.
type chatRequest struct {
	method, path string
	header       http.Header
	body         map[string]any
}

// chatPlayback starts a server that answers the n-th request with the n-th
// response (and an API error once they run out, or with status for every
// request when status is not 200). It returns the server's URL and a
// function that returns the requests received so far.
func chatPlayback(t *testing.T, status int, responses []string) (url string, requests func() []chatRequest) {
	t.Helper()
	var (
		mu   sync.Mutex
		reqs []chatRequest
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(data, &body)
		mu.Lock()
		n := len(reqs)
		reqs = append(reqs, chatRequest{r.Method, r.URL.Path, r.Header.Clone(), body})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case status != http.StatusOK:
			w.WriteHeader(status)
			fmt.Fprint(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
		case n >= len(responses):
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":"playback: request %d has no recorded response"}}`, n+1)
		default:
			fmt.Fprint(w, responses[n])
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []chatRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(reqs)
	}
}

// TestChat runs a two-message chat against the playback server, with the
// default model and max tokens and with flags: the output, the store, and
// every request the chat sent.
func TestChat(t *testing.T) {
	for _, tc := range []struct {
		name      string
		flags     []string
		model     string
		maxTokens float64
	}{
		{"defaults", nil, "claude-sonnet-5-5", 4096},
		{"flags", []string{"--model", "claude-haiku-5-5", "--max-tokens=512"}, "claude-haiku-5-5", 512},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, requests := chatPlayback(t, http.StatusOK, chatResponses)
			name := storeName(t)
			args := append([]string{"--store", "shared://" + name, "chat"}, tc.flags...)
			stdin := "I prefer tea. Remember that.\n\n   \nWhat do I prefer?"
			code, stdout, stderr := cloudmem(args, stdin, map[string]string{apiKeyEnv: "test-key", baseURLEnv: url})
			const want = "Let me check my memory.\n" +
				"[memory: view /memories]\n" +
				"[memory: create /memories/prefs.md]\n" +
				"Noted: you prefer tea.\n" +
				"You prefer tea.\n"
			if code != 0 || stdout != want || stderr != "" {
				t.Fatalf("chat = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
			}
			data, _, err := sharedStore(name).Get(context.Background(), "prefs.md", blob.MaxObjectBytes)
			if err != nil || string(data) != "Prefers tea.\n" {
				t.Errorf("the store holds prefs.md = %q, %v; want %q", data, err, "Prefers tea.\n")
			}

			reqs := requests()
			if len(reqs) != 4 {
				t.Fatalf("the chat sent %d requests, want 4", len(reqs))
			}
			for i, r := range reqs {
				what := fmt.Sprintf("request %d", i+1)
				// The SDK sends the API key as a bearer token.
				if auth := r.header.Get("Authorization"); r.method != http.MethodPost || r.path != "/v1/messages" || auth != "Bearer test-key" {
					t.Errorf("%s: %s %s with authorization %q, want POST /v1/messages with Bearer test-key", what, r.method, r.path, auth)
				}
				if betas := strings.Split(r.header.Get("Anthropic-Beta"), ","); !slices.Contains(betas, "context-management-2025-06-27") {
					t.Errorf("%s: anthropic-beta %q lacks context-management-2025-06-27", what, betas)
				}
				if r.body["model"] != tc.model || r.body["max_tokens"] != tc.maxTokens {
					t.Errorf("%s: model %v, max_tokens %v; want %s, %v", what, r.body["model"], r.body["max_tokens"], tc.model, tc.maxTokens)
				}
				checkChatJSON(t, what+": context_management", r.body["context_management"],
					`{"edits": [{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]}`)
				// The first request declares the memory tool; later ones may
				// leave it to the message thread, or repeat it.
				if tools, ok := r.body["tools"]; ok || i == 0 {
					checkChatJSON(t, what+": tools", tools, `[{"type": "memory_20250818", "name": "memory"}]`)
				}
			}
			checkChatJSON(t, "request 1: messages", reqs[0].body["messages"],
				`[{"role": "user", "content": [{"type": "text", "text": "I prefer tea. Remember that."}]}]`)
			checkChatJSON(t, "request 2: last message", last(reqs[1].body["messages"]), `{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_c1", "content": [{"type": "text",
				 "text": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n0B\t/memories"}]}]}`)
			checkChatJSON(t, "request 3: last message", last(reqs[2].body["messages"]), `{"role": "user", "content": [
				{"type": "tool_result", "tool_use_id": "toolu_c2", "content": [{"type": "text", "text": "File created successfully at: /memories/prefs.md"}]}]}`)
			checkChatJSON(t, "request 4: last message", last(reqs[3].body["messages"]),
				`{"role": "user", "content": [{"type": "text", "text": "What do I prefer?"}]}`)
		})
	}
}

// TestChatErrorResult checks that a memory call that fails reaches the
// model as the handler's text, with one "Error: ", and is_error.
func TestChatErrorResult(t *testing.T) {
	url, requests := chatPlayback(t, http.StatusOK, []string{
		`{"id": "msg_e1", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
		  "content": [{"type": "tool_use", "id": "toolu_e1", "name": "memory", "input": {"command": "view", "path": "/memories/nope"}}],
		  "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 10}}`,
		`{"id": "msg_e2", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
		  "content": [{"type": "text", "text": "I have no memory of that."}],
		  "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 10}}`,
	})
	code, stdout, stderr := cloudmem([]string{"--store", "mem://", "chat"}, "What is in nope?\n",
		map[string]string{apiKeyEnv: "test-key", baseURLEnv: url})
	const want = "[memory: view /memories/nope]\nI have no memory of that.\n"
	if code != 0 || stdout != want || stderr != "" {
		t.Fatalf("chat = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, want)
	}
	reqs := requests()
	if len(reqs) != 2 {
		t.Fatalf("the chat sent %d requests, want 2", len(reqs))
	}
	checkChatJSON(t, "request 2: last message", last(reqs[1].body["messages"]), `{"role": "user", "content": [
		{"type": "tool_result", "tool_use_id": "toolu_e1", "is_error": true,
		 "content": [{"type": "text", "text": "Error: The path /memories/nope does not exist. Please provide a valid path."}]}]}`)
}

// TestChatFailures checks the ways chat ends early: no API key (one line,
// exit 1, before the store is opened), a request the API refuses (exit 1),
// and bad flags (exit 2).
func TestChatFailures(t *testing.T) {
	code, stdout, stderr := cloudmem([]string{"--store", "mem://?readonly=maybe", "chat"}, "hello\n", nil)
	if want := "cloudmem chat: ANTHROPIC_API_KEY is not set; chat needs an Anthropic API key\n"; code != 1 || stdout != "" || stderr != want {
		t.Errorf("chat without a key = %d\nstdout:\n%s\nstderr:\n%s\nwant 1 and stderr:\n%s", code, stdout, stderr, want)
	}

	url, requests := chatPlayback(t, http.StatusUnauthorized, nil)
	code, stdout, stderr = cloudmem([]string{"--store", "mem://", "chat"}, "hello\nagain\n",
		map[string]string{apiKeyEnv: "bad-key", baseURLEnv: url})
	if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "cloudmem chat: ") || !strings.Contains(stderr, "401 Unauthorized") ||
		strings.Count(stderr, "\n") != 1 || len(requests()) != 1 {
		t.Errorf("chat refused by the API = %d after %d requests\nstdout:\n%s\nstderr:\n%s\nwant 1 after 1 request, and one line on stderr naming the 401",
			code, len(requests()), stdout, stderr)
	}

	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"chat", "now"}, usageErr("chat", `unexpected argument "now"`, chatUse)},
		{[]string{"chat", "--max-tokens", "0"}, usageErr("chat", "--max-tokens 0: want a positive number", chatUse)},
		{[]string{"chat", "--max-tokens", "many"}, usageErr("chat", `invalid argument "many" for "--max-tokens" flag: strconv.ParseInt: parsing "many": invalid syntax`, chatUse)},
	} {
		code, stdout, stderr := cloudmem(tc.args, "", map[string]string{apiKeyEnv: "test-key"})
		if code != 2 || stdout != "" || stderr != tc.stderr {
			t.Errorf("cloudmem %q = %d\nstdout:\n%s\nstderr:\n%s\nwant 2 and stderr:\n%s", tc.args, code, stdout, stderr, tc.stderr)
		}
	}
}

const chatUse = "chat [--model MODEL] [--max-tokens N] [--actor NAME]"

var chatUsageText = commandHelp(`Chats with Claude, which keeps its memory in the store with the memory tool. Each line of
stdin is a message; Claude's answers and its memory calls are printed. Old tool results are
cleared from the context as it grows, never the memory tool's.

Needs ANTHROPIC_API_KEY. ANTHROPIC_BASE_URL, when set, is the API's address.`, chatUse,
	`      --actor NAME     the NAME the store's history records as the author of the changes (default user@host)
  -h, --help           help for chat
      --max-tokens N   at most N tokens in one response (default 4096)
      --model MODEL    the Claude MODEL to talk to (default "claude-sonnet-5-5")
`)

// TestChatHelp checks chat's help, which needs no API key.
func TestChatHelp(t *testing.T) {
	code, stdout, stderr := cloudmem([]string{"chat", "--help"}, "", nil)
	if code != 0 || stdout != chatUsageText || stderr != "" {
		t.Errorf("chat --help = %d\nstdout:\n%s\nstderr:\n%s\nwant 0 and stdout:\n%s", code, stdout, stderr, chatUsageText)
	}
}

// TestChatTerminal checks the greeting and prompts chat shows when stdin is
// a character device (here /dev/null, which ends at once), and that a pipe
// or a reader gets none.
func TestChatTerminal(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	var stdout, stderr strings.Builder
	env := map[string]string{apiKeyEnv: "test-key", baseURLEnv: "http://127.0.0.1:1"}
	code := run([]string{"--store", "mem://", "chat"}, devNull, &stdout, &stderr, func(k string) string { return env[k] })
	const want = "Chatting with claude-sonnet-5-5, which keeps its memory in the store. End with Ctrl-D.\n> \n"
	if code != 0 || stdout.String() != want || stderr.String() != "" {
		t.Errorf("chat on %s = %d\nstdout:\n%q\nstderr:\n%s\nwant 0 and stdout:\n%q", os.DevNull, code, stdout.String(), stderr.String(), want)
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer r.Close()
	if isTerminal(r) || isTerminal(strings.NewReader("")) {
		t.Error("isTerminal is true for a pipe or a strings.Reader")
	}
}

// TestDescribeCall checks the one-line summaries of tool calls.
func TestDescribeCall(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"memory", `{"command":"view","path":"/memories"}`, "memory: view /memories"},
		{"memory", `{"command":"str_replace","path":"/memories/a.md","old_str":"x"}`, "memory: str_replace /memories/a.md"},
		{"memory", `{"command":"rename","old_path":"/memories/a","new_path":"/memories/b"}`, "memory: rename /memories/a -> /memories/b"},
		{"memory", `{"command":"delete"}`, "memory: delete"},
		{"memory", `{"command":"view","path":5}`, "memory"},
		{"memory", `{}`, "memory"},
		{"memory", `not json`, "memory"},
		{"get_weather", `{"command":"view","path":"/memories"}`, "get_weather"},
	} {
		if got := describeCall(tc.name, json.RawMessage(tc.input)); got != tc.want {
			t.Errorf("describeCall(%s, %s) = %q, want %q", tc.name, tc.input, got, tc.want)
		}
	}
}

// last returns the last element of a decoded JSON array, or nil.
func last(v any) any {
	a, _ := v.([]any)
	if len(a) == 0 {
		return nil
	}
	return a[len(a)-1]
}

// checkChatJSON checks that got, a decoded JSON value, equals the JSON text want.
func checkChatJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad wanted JSON: %v", what, err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		wj, _ := json.Marshal(w)
		t.Errorf("%s:\n got %s\nwant %s", what, g, wj)
	}
}
