package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

// ToolName is the name of the one tool a Server offers.
const ToolName = "memory"

// DefaultCommandTimeout bounds one command when Options.CommandTimeout is 0.
const DefaultCommandTimeout = 60 * time.Second

// Options configures a Server. The zero value is ready to use.
type Options struct {
	// Actor names who runs the commands (see blob.WithActor): a tenant's
	// name, or user@host for a local server. Empty leaves the actor of the
	// request's context, if any.
	Actor string
	// CommandTimeout bounds each command, which runs to its end even if
	// its client goes away. 0 means DefaultCommandTimeout.
	CommandTimeout time.Duration
	// Version is the server version reported to clients. Empty means
	// "devel".
	Version string
	// Logger receives what the server does not tell the client (the
	// details of failures). Nil means slog.Default().
	Logger *slog.Logger
	// Search, when not nil, makes the Server offer the memory_search tool
	// over it (see search.go). Give the Handler its Observer.
	Search *search.Index
}

// A Server serves one memory.Handler over MCP: the memory tool, and the
// memory files as resources (see the package documentation). It is safe for
// concurrent use, and one Server may serve many sessions at once, over any
// transport the SDK offers.
type Server struct {
	h       *memory.Handler
	mcp     *mcp.Server
	actor   string
	timeout time.Duration
	log     *slog.Logger
	subs    subscriptions

	mu      sync.Mutex
	running int             // commands in flight
	idle    []chan struct{} // closed when running drops to 0
	closed  bool            // no new command starts
}

// New returns a Server for h. opts may be nil.
func New(h *memory.Handler, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	if o.Version == "" {
		o.Version = "devel"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Server{h: h, actor: o.Actor, timeout: o.CommandTimeout, log: o.Logger}
	s.subs.uris, s.subs.n = map[string]string{}, map[string]int{}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "cloudmem", Title: "cloudmem memory", Version: o.Version},
		&mcp.ServerOptions{
			Instructions: instructions,
			Logger:       sdkLogger(o.Logger),
			Capabilities: &mcp.ServerCapabilities{
				Tools:     &mcp.ToolCapabilities{},
				Resources: &mcp.ResourceCapabilities{Subscribe: true},
			},
			SubscribeHandler:   s.subscribe,
			UnsubscribeHandler: s.unsubscribe,
		})
	s.mcp.AddTool(tool(), s.callTool)
	if o.Search != nil {
		s.mcp.AddTool(searchTool(), s.searchHandler(o.Search))
	}
	s.mcp.AddResourceTemplate(resourceTemplate(), s.readResource)
	s.mcp.AddReceivingMiddleware(s.listMiddleware)
	return s
}

// MCP returns the SDK server, to connect it to a transport of the caller's
// choosing (Run does this for one transport).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one session over t until the client ends it or ctx is done,
// then waits for the commands in flight (at most the command timeout). It is
// how a local server serves stdio:
//
//	err := srv.Run(ctx, &mcp.StdioTransport{})
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	err := s.mcp.Run(ctx, t)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if werr := s.Wait(wctx); werr != nil {
		return errors.Join(err, werr)
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil // asked to stop, and stopped cleanly
	}
	return err
}

// Close makes the Server refuse new commands (each gets an error result
// saying the server is shutting down); the commands in flight go on. Use
// Wait to wait for them.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// Wait waits until no command is in flight, or ctx is done (then it
// returns ctx's error).
func (s *Server) Wait(ctx context.Context) error {
	s.mu.Lock()
	if s.running == 0 {
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.idle = append(s.idle, ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mcpserver: waiting for %d commands in flight: %w", s.inFlight(), ctx.Err())
	}
}

func (s *Server) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// begin counts a command in flight; it reports false once Close was called.
func (s *Server) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.running++
	return true
}

func (s *Server) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if s.running == 0 {
		for _, ch := range s.idle {
			close(ch)
		}
		s.idle = nil
	}
}

// shuttingDown is the result of a command a closing server refuses. It
// follows the handler's form for an error; nothing was done.
var shuttingDown = memory.Result{Text: "Error: The memory server is shutting down; no change was made. Try the command again.", IsError: true}

// callTool runs one memory command. The arguments go to the handler as
// sent; the command runs detached from the request's cancellation (see the
// package documentation).
func (s *Server) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if !s.begin() {
		return toolResult(shuttingDown), nil
	}
	defer s.end()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer cancel()
	if s.actor != "" {
		ctx = blob.WithActor(ctx, s.actor)
	}
	res := s.h.Execute(ctx, []byte(req.Params.Arguments))
	s.notifyChanged(ctx, res.Changed())
	return toolResult(res), nil
}

// toolResult is the MCP form of a handler result: its text as one text
// content (isError on an error), or its image as one image content.
func toolResult(r memory.Result) *mcp.CallToolResult {
	if r.Image != nil {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: r.Image.Data, MIMEType: r.Image.MediaType}}}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Text}}, IsError: r.IsError}
}

// ResultOf is the inverse of the Server's tool results: the memory.Result a
// CallToolResult carries (its one text or image content, and its isError
// flag), or an error when r holds anything else. Result.Err is not carried
// over MCP and stays nil. A client uses it to read a result as the handler
// gave it.
func ResultOf(r *mcp.CallToolResult) (memory.Result, error) {
	if r == nil || len(r.Content) != 1 {
		return memory.Result{}, fmt.Errorf("mcpserver: a memory result has one content, got %d", contentLen(r))
	}
	switch c := r.Content[0].(type) {
	case *mcp.TextContent:
		return memory.Result{Text: c.Text, IsError: r.IsError}, nil
	case *mcp.ImageContent:
		return memory.Result{Image: &memory.Image{MediaType: c.MIMEType, Data: c.Data}, IsError: r.IsError}, nil
	default:
		return memory.Result{}, fmt.Errorf("mcpserver: unexpected content %T in a memory result", c)
	}
}

func contentLen(r *mcp.CallToolResult) int {
	if r == nil {
		return 0
	}
	return len(r.Content)
}

// sdkLogger is l for the SDK, which logs every session and notification at
// Info: only its warnings and errors pass.
func sdkLogger(l *slog.Logger) *slog.Logger {
	return slog.New(minLevel{Handler: l.Handler(), min: slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{Handler: m.Handler.WithAttrs(attrs), min: m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: m.Handler.WithGroup(name), min: m.min}
}
