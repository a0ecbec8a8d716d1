package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// TestToolDefinition: the server lists one tool, memory, whose schema
// names the six commands and every field of theirs, each described.
func TestToolDefinition(t *testing.T) {
	h, err := memory.New(mem.New(nil), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, mcpserver.New(h, &mcpserver.Options{Logger: quiet}))
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tools) != 1 || list.Tools[0].Name != "memory" {
		t.Fatalf("tools: %+v", list.Tools)
	}
	tool := list.Tools[0]
	if !strings.HasPrefix(tool.Description, "Your memory: a directory of files under /memories") ||
		!strings.Contains(tool.Description, "view /memories before doing anything else") {
		t.Errorf("description: %q", tool.Description)
	}
	if a := tool.Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("annotations: %+v", a)
	}
	raw, err := json.Marshal(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Type       string `json:"type"`
		Required   []string
		Properties map[string]struct {
			Type        string   `json:"type"`
			Enum        []string `json:"enum"`
			Description string   `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || !slices.Equal(schema.Required, []string{"command"}) {
		t.Errorf("schema: type %q, required %q", schema.Type, schema.Required)
	}
	if got, want := schema.Properties["command"].Enum, []string{"view", "create", "str_replace", "insert", "delete", "rename"}; !slices.Equal(got, want) {
		t.Errorf("command enum %q, want %q", got, want)
	}
	want := map[string]string{"command": "string", "path": "string", "view_range": "array", "file_text": "string", "old_str": "string",
		"new_str": "string", "insert_line": "integer", "insert_text": "string", "old_path": "string", "new_path": "string"}
	for name, typ := range want {
		p, ok := schema.Properties[name]
		if !ok || p.Type != typ || p.Description == "" {
			t.Errorf("property %s: %+v, want type %s with a description", name, p, typ)
		}
	}
	if len(schema.Properties) != len(want) {
		t.Errorf("%d properties, want %d", len(schema.Properties), len(want))
	}
}

// actorStore records the actor of every Put of a memory file (the
// handler's own bookkeeping under .cloudmem is not a command's write).
type actorStore struct {
	blob.Store
	mu     sync.Mutex
	actors []string
}

func (a *actorStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	a.mu.Lock()
	if !blob.IsReserved(key) {
		a.actors = append(a.actors, key+" by "+blob.Actor(ctx))
	}
	a.mu.Unlock()
	return a.Store.Put(ctx, key, data, c)
}

// TestActor: a command runs as its tenant over HTTP, and as the server's
// actor (user@host for "cloudmem mcp") over a local transport.
func TestActor(t *testing.T) {
	store := &actorStore{Store: mem.New(nil)}
	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: store, Tokens: teamTokens(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	create := []byte(`{"command":"create","path":"/memories/a.md","file_text":"a"}`)
	for _, token := range []string{aliceToken, bobToken} {
		if r := call(t.Context(), connectHTTP(t, ts.URL, token), create); r.IsError {
			t.Fatal(r.Text)
		}
	}
	h, err := memory.New(store, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := call(t.Context(), connectInMemory(t, mcpserver.New(h, &mcpserver.Options{Actor: "me@laptop", Logger: quiet})), []byte(`{"command":"create","path":"/memories/b.md","file_text":"b"}`)); r.IsError {
		t.Fatal(r.Text)
	}
	if want := []string{"alice/a.md by alice", "bob/a.md by bob", "b.md by me@laptop"}; !slices.Equal(store.actors, want) {
		t.Errorf("actors %q, want %q", store.actors, want)
	}
}

// TestResourcePages: a list longer than a page comes in pages, each
// cursor taking up after the last file of the page before.
func TestResourcePages(t *testing.T) {
	store := mem.New(nil)
	files := map[string]string{}
	for i := range 1500 {
		files[fmt.Sprintf("d%d/f%04d.md", i%3, i)] = "x"
	}
	put(t, store, files)
	h, err := memory.New(store, memory.Options{MaxFiles: -1})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, mcpserver.New(h, &mcpserver.Options{Logger: quiet}))
	var got []string
	pages := 0
	params := &mcp.ListResourcesParams{}
	for {
		res, err := cs.ListResources(t.Context(), params)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if res.CacheScope != "private" {
			t.Errorf("cache scope %q, want private", res.CacheScope)
		}
		for _, r := range res.Resources {
			got = append(got, strings.TrimPrefix(r.Name, "/memories/"))
		}
		if res.NextCursor == "" {
			break
		}
		params = &mcp.ListResourcesParams{Cursor: res.NextCursor}
	}
	want := slices.Sorted(maps.Keys(files))
	if pages != 2 || !slices.Equal(got, want) {
		t.Errorf("%d pages, %d files (want 2 pages, %d files in key order)", pages, len(got), len(want))
	}
}

// stuckStore is a store whose Put waits until its context is done (or the
// test ends: release, so that a failing test does not hang).
type stuckStore struct {
	blob.Store
	release chan struct{}
}

func (s stuckStore) Put(ctx context.Context, _ string, _ []byte, _ blob.Cond) (blob.Info, error) {
	select {
	case <-ctx.Done():
		return blob.Info{}, ctx.Err()
	case <-s.release:
		return blob.Info{}, errors.New("released at the end of the test")
	}
}

// TestCommandTimeout: Options.CommandTimeout bounds a command that its
// store keeps waiting: the client's call returns the handler's storage
// failure (a timeout, nothing done) soon after it, though the client's own
// context never ends.
func TestCommandTimeout(t *testing.T) {
	store := mem.New(nil)
	stuck := stuckStore{Store: store, release: make(chan struct{})}
	h, err := memory.New(stuck, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectInMemory(t, mcpserver.New(h, &mcpserver.Options{CommandTimeout: 100 * time.Millisecond, Logger: quiet}))
	t.Cleanup(func() { close(stuck.release) }) // before the session's cleanup
	done := make(chan memory.Result, 1)
	go func() {
		done <- call(context.Background(), cs, []byte(`{"command":"create","path":"/memories/a.md","file_text":"a"}`))
	}()
	select {
	case got := <-done:
		if want := (memory.Result{Text: "Error: The memory storage failed: the request timed out", IsError: true}); got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the command outlived its timeout")
	}
	if n := len(snapshot(t, store, "")); n != 0 {
		t.Errorf("%d objects after a create that timed out", n)
	}
}
