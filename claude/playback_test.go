package claude_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/claude"
	"github.com/cloudmem/cloudmem/memory"
)

// playback stands in for the Messages API: it answers the n-th request with
// the n-th recorded response (testdata/*.json, written by hand from the
// API's documented response shape) and keeps every request for the test to
// inspect. A request beyond the recording gets an API error.
type playback struct {
	responses [][]byte

	mu       sync.Mutex
	requests []request
}

// request is one request the playback server received.
type request struct {
	path   string
	header http.Header
	body   map[string]any // the JSON body, decoded
}

// newPlayback starts a playback server with the named fixtures and returns
// it with a client that talks to it, with no retries.
func newPlayback(t *testing.T, fixtures ...string) (*playback, anthropic.Client) {
	t.Helper()
	p := &playback{}
	for _, name := range fixtures {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		p.responses = append(p.responses, data)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	client := anthropic.NewClient(option.WithAPIKey("test-key"), option.WithBaseURL(srv.URL), option.WithMaxRetries(0))
	return p, client
}

func (p *playback) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(r.Body)
	var body map[string]any
	if err == nil {
		err = json.Unmarshal(data, &body)
	}
	p.mu.Lock()
	n := len(p.requests)
	p.requests = append(p.requests, request{path: r.URL.Path, header: r.Header.Clone(), body: body})
	p.mu.Unlock()
	switch {
	case err != nil:
		apiError(w, http.StatusBadRequest, "playback: reading the request body: "+err.Error())
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		apiError(w, http.StatusNotFound, "playback: no such endpoint: "+r.Method+" "+r.URL.Path)
	case n >= len(p.responses):
		apiError(w, http.StatusBadRequest, fmt.Sprintf("playback: request %d has no recorded response", n+1))
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(p.responses[n])
	}
}

// apiError writes an error response in the API's shape.
func apiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]any{
		"type":  "error",
		"error": map[string]any{"type": "invalid_request_error", "message": msg},
	})
}

// Requests returns the requests received so far.
func (p *playback) Requests() []request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// pngData is the start of a PNG file: enough for view to return an image.
const pngData = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"

// seededHandler returns an in-memory store holding /memories/pic.png and a
// Handler over it.
func seededHandler(t *testing.T) (blob.Store, *memory.Handler) {
	t.Helper()
	store := mem.New(nil)
	if _, err := store.Put(context.Background(), "pic.png", []byte(pngData), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(store, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return store, h
}

// requestParams returns the request of the playback tests: the first user
// message, the memory tool, its context editing and its beta.
func requestParams() anthropic.BetaMessageNewParams {
	return anthropic.BetaMessageNewParams{
		Model:             anthropic.ModelClaudeSonnet5_5,
		MaxTokens:         1024,
		Betas:             []anthropic.AnthropicBeta{claude.Beta},
		Tools:             []anthropic.BetaToolUnionParam{claude.ToolParam()},
		ContextManagement: claude.ContextManagement(),
		Messages: []anthropic.BetaMessageParam{
			anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("I am Ada and I prefer tea. Remember that.")),
		},
	}
}

// What the requests of the playback (turn1.json, turn2.json, turn3.json) must carry.
const (
	wantTools             = `[{"name": "memory", "type": "memory_20250818"}]`
	wantContextManagement = `{"edits": [{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]}`
	// The answer to turn1.json's view of /memories.
	wantResults1 = `{"role": "user", "content": [
		{"type": "tool_result", "tool_use_id": "toolu_01View", "content": [{"type": "text",
		 "text": "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n16B\t/memories\n16B\t/memories/pic.png"}]}
	]}`
	// The answers to turn2.json's create, view of a missing file and view of
	// an image. The error text is the handler's, with one "Error: ".
	wantResults2 = `{"role": "user", "content": [
		{"type": "tool_result", "tool_use_id": "toolu_02Create", "content": [{"type": "text", "text": "File created successfully at: /memories/user.md"}]},
		{"type": "tool_result", "tool_use_id": "toolu_03Missing", "is_error": true,
		 "content": [{"type": "text", "text": "Error: The path /memories/nope does not exist. Please provide a valid path."}]},
		{"type": "tool_result", "tool_use_id": "toolu_04Image",
		 "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}}]}
	]}`
)

// checkPlayback checks the requests of a full playback and the store after
// it: three requests to the beta Messages endpoint with the memory beta and
// context editing; the first declares the memory tool (later ones may leave
// the tools out, as a message thread does, or repeat them); the second and
// third end with the user message answering the calls of turn1.json and
// turn2.json; and the file the model created is in the store.
func checkPlayback(t *testing.T, reqs []request, store blob.Store) {
	t.Helper()
	if len(reqs) != 3 {
		t.Fatalf("the playback server got %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.path != "/v1/messages" {
			t.Errorf("request %d went to %s, want /v1/messages", i+1, r.path)
		}
		if betas := strings.Split(r.header.Get("Anthropic-Beta"), ","); !slices.Contains(betas, string(claude.Beta)) {
			t.Errorf("request %d: anthropic-beta is %q, want it to include %s", i+1, betas, claude.Beta)
		}
		checkJSON(t, fmt.Sprintf("request %d: context_management", i+1), r.body["context_management"], wantContextManagement)
		if tools, ok := r.body["tools"]; ok || i == 0 {
			checkJSON(t, fmt.Sprintf("request %d: tools", i+1), tools, wantTools)
		}
	}
	checkJSON(t, "request 2: last message", lastMessage(reqs[1]), wantResults1)
	checkJSON(t, "request 3: last message", lastMessage(reqs[2]), wantResults2)

	data, _, err := store.Get(context.Background(), "user.md", blob.MaxObjectBytes)
	if err != nil || string(data) != "Name: Ada\nPrefers tea.\n" {
		t.Errorf("the store holds user.md = %q, %v; want %q", data, err, "Name: Ada\nPrefers tea.\n")
	}
}

// lastMessage returns the last element of a request's messages, or nil.
func lastMessage(r request) any {
	msgs, _ := r.body["messages"].([]any)
	if len(msgs) == 0 {
		return nil
	}
	return msgs[len(msgs)-1]
}

// checkJSON checks that got, a decoded JSON value, equals the JSON text want.
func checkJSON(t *testing.T, what string, got any, want string) {
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
