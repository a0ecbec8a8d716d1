package mcpserver_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

func TestURIOf(t *testing.T) {
	for path, want := range map[string]string{
		"/memories/notes.md":        "memory:///memories/notes.md",
		"/memories/a b/c#d?.md":     "memory:///memories/a%20b/c%23d%3F.md",
		"/memories/caf\u00e9/%.txt": "memory:///memories/caf%C3%A9/%25.txt",
	} {
		if got := mcpserver.URIOf(path); got != want {
			t.Errorf("URIOf(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestResources lists and reads the memory files as resources, and gets an
// update notification for a subscribed file that a command changes.
func TestResources(t *testing.T) {
	ctx := t.Context()
	store := mem.New(nil)
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	put(t, store, map[string]string{
		"notes.md": "# notes\n", "a b/c#d.txt": "odd name", "img/p.png": png, "bin": "\xff\xfe", ".cloudmem/key": "secret",
		"empty.md": "",
	})
	h, err := memory.New(store, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(h, &mcpserver.Options{Logger: quiet})
	updated := make(chan string, 10)
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	// Protocol 2025-11-25: there Subscribe is a request the server answers
	// once the subscription holds. Under 2026-07-28 the SDK's client sends
	// Subscribe as a subscriptions/listen stream and returns at once, so a
	// change made right after it may come before the server has the
	// subscription and go unnotified (seen once in CI under load).
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { updated <- r.Params.URI },
	}).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		URI, Name, MIMEType string
		Size                int64
	}
	var got []entry
	for _, r := range list.Resources {
		got = append(got, entry{r.URI, r.Name, r.MIMEType, r.Size})
	}
	want := []entry{
		{"memory:///memories/a%20b/c%23d.txt", "/memories/a b/c#d.txt", "text/plain", 8},
		{"memory:///memories/bin", "/memories/bin", "", 2},
		{"memory:///memories/empty.md", "/memories/empty.md", "text/markdown", 0},
		{"memory:///memories/img/p.png", "/memories/img/p.png", "image/png", int64(len(png))},
		{"memory:///memories/notes.md", "/memories/notes.md", "text/markdown", 8},
	}
	if !slices.Equal(got, want) || list.NextCursor != "" {
		t.Errorf("resources:\n got %+v\nwant %+v (next cursor %q)", got, want, list.NextCursor)
	}

	for _, tc := range []struct {
		uri, mime, text string
		blob            []byte
	}{
		{"memory:///memories/notes.md", "text/markdown", "# notes\n", nil},
		{"memory:///memories/a%20b/c%23d.txt", "text/plain", "odd name", nil},
		{"memory:///memories/img/p.png", "image/png", "", []byte(png)},
		{"memory:///memories/bin", "application/octet-stream", "", []byte("\xff\xfe")},
		{"memory:///memories/empty.md", "text/markdown", "", nil},
	} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: tc.uri})
		if err != nil {
			t.Errorf("read %s: %v", tc.uri, err)
			continue
		}
		if len(res.Contents) != 1 {
			t.Errorf("read %s: %d contents", tc.uri, len(res.Contents))
			continue
		}
		c := res.Contents[0]
		if c.URI != tc.uri || c.MIMEType != tc.mime || c.Text != tc.text || !slices.Equal(c.Blob, tc.blob) {
			t.Errorf("read %s: %+v, want %s %q %q", tc.uri, c, tc.mime, tc.text, tc.blob)
		}
	}
	for _, uri := range []string{
		"memory:///memories/missing.md", "memory:///memories/img", "memory:///memories/.cloudmem/key",
		"memory:///memories/../etc/passwd", "memory://host/memories/notes.md", "memory:///memories/notes.md?x=1",
		"file:///memories/notes.md", "memory:///memories",
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound {
			t.Errorf("read %s: %v, want resource not found", uri, err)
		}
	}

	// A subscribed file changed by a command, or under a directory a
	// command renames, is notified; an unsubscribed one is not.
	for _, uri := range []string{"memory:///memories/notes.md", "memory:///memories/img/p.png"} {
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	for _, in := range []string{
		`{"command":"str_replace","path":"/memories//notes.md","old_str":"notes","new_str":"Notes"}`,
		`{"command":"view","path":"/memories/notes.md"}`,
		`{"command":"insert","path":"/memories/empty.md","insert_line":0,"insert_text":"x"}`,
		`{"command":"rename","old_path":"/memories/img","new_path":"/memories/pics"}`,
	} {
		if r := call(ctx, cs, []byte(in)); r.IsError {
			t.Fatalf("%s: %+v", in, r)
		}
	}
	var notified []string
	for len(notified) < 2 {
		select {
		case uri := <-updated:
			notified = append(notified, uri)
		case <-time.After(5 * time.Second):
			t.Fatalf("notified %q, want notes.md and p.png", notified)
		}
	}
	select {
	case uri := <-updated:
		notified = append(notified, uri)
	case <-time.After(100 * time.Millisecond):
	}
	if want := []string{"memory:///memories/notes.md", "memory:///memories/img/p.png"}; !slices.Equal(notified, want) {
		t.Errorf("notified %q, want %q", notified, want)
	}
}
