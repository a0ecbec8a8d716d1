package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/search"
)

// The environment of "cloudmem mcp --http": tokens never come from the
// command line, where every user of the machine can read them.
const (
	mcpTokenEnv     = "CLOUDMEM_MCP_TOKEN"      // one bearer token, for the whole store (tenant "default")
	mcpTokenFileEnv = "CLOUDMEM_MCP_TOKEN_FILE" // the token file, when --token-file is not given
)

func init() { register(newMCPCmd) }

// mcpFlags are the flags of "cloudmem mcp".
type mcpFlags struct {
	http, tokenFile, tlsCert, tlsKey, actor string
	maxRequestBytes                         int64
	maxSessions, maxTokenSessions           int
	maxInFlight, maxTokenInFlight           int
	search                                  bool
	indexCache                              string // --index-cache FILE: the search index also kept there (stdio only)
	stdio                                   bool   // --stdio: stdio even when the config names an address
	oauth                                   oauthFlags
	stateless                               bool // --stateless: for replicas behind a load balancer
	web                                     bool // --web: the web console beside MCP (web.go)
}

// newMCPCmd is "cloudmem mcp": the store as an MCP server, over stdio (for
// a client that starts it, such as Claude Code or Claude Desktop) or, with
// --http, over streamable HTTP for a team. It runs until the client closes
// stdin, or until SIGINT or SIGTERM; the commands in flight then finish.
func newMCPCmd(a *app) *cobra.Command { return mcpCommand(a, new(mcpFlags)) }

// mcpCommand is newMCPCmd with its flags parsed into f.
func mcpCommand(a *app, f *mcpFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp [--http ADDR [--token-file FILE] [--tls-cert FILE --tls-key FILE]]",
		Short: "Serve the store as an MCP server (stdio, or streamable HTTP with --http)",
		Long: "Serves the store over the Model Context Protocol: the tool memory (the six commands of\n" +
			"Claude's memory tool, with the exact results), the read-only tool memory_search (unless\n" +
			"--search=false; --index-cache FILE keeps its index in FILE too, stdio only), and every memory\n" +
			"file as a resource (memory:///memories/...).\n\n" +
			"Without --http it speaks MCP on stdin and stdout, for a client that starts it:\n" +
			"  claude mcp add memory -- cloudmem --store s3://bucket/memories mcp\n\n" +
			"With --http ADDR it serves streamable HTTP at http://ADDR" + mcpserver.MCPPath + " and a health check at " +
			mcpserver.HealthPath + ".\n" +
			"Clients authenticate with bearer tokens: a token file (--token-file, else $" + mcpTokenFileEnv + ")\n" +
			"maps each token to a tenant, its own part of the store:\n" +
			`  {"tenants": [{"name": "alice", "token_sha256": "<hex SHA-256 of the token>", "prefix": "alice"},` + "\n" +
			`               {"name": "audit", "token": "<the token>", "readonly": true}]}` + "\n" +
			"and $" + mcpTokenEnv + " adds one token for the whole store. Without any token it serves\n" +
			"loopback addresses only. --web also serves the web console (cloudmem web) at http://ADDR/,\n" +
			"with the same tokens or OAuth access tokens. SIGTERM shuts it down gracefully.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if err := a.applyMCPConfig(cmd, f); err != nil { // config.go
				return err
			}
			if f.indexCache != "" && !f.search {
				return usageErrorf("--index-cache needs --search")
			}
			if f.indexCache != "" && f.http != "" {
				return usageErrorf("--index-cache serves stdio only: over --http each tenant has an index of its own, in memory")
			}
			if f.http == "" {
				if f.tokenFile != "" || f.tlsCert != "" || f.tlsKey != "" || f.oauth.set() {
					return usageErrorf("--token-file, --tls-cert, --tls-key and --oauth-* need --http")
				}
				if f.web {
					return usageErrorf("--web needs --http")
				}
				return a.serveStdio(ctx, *f)
			}
			return a.serveHTTP(ctx, *f)
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&f.http, "http", "", "serve streamable HTTP on `ADDR` (host:port) instead of stdio")
	flags.StringVar(&f.tokenFile, "token-file", "", "the bearer tokens and their tenants, a JSON `FILE` (default $"+mcpTokenFileEnv+")")
	flags.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (PEM; with --tls-key)")
	flags.StringVar(&f.tlsKey, "tls-key", "", "the private key `FILE` of --tls-cert (PEM)")
	flags.Int64Var(&f.maxRequestBytes, "max-request-bytes", mcpserver.DefaultMaxRequestBytes, "refuse HTTP requests larger than `N` bytes")
	flags.IntVar(&f.maxSessions, "max-sessions", mcpserver.DefaultMaxSessions, "with --http, the most sessions open at once, of all tokens (negative: no cap)")
	flags.IntVar(&f.maxTokenSessions, "max-token-sessions", mcpserver.DefaultMaxTenantSessions, "with --http, the most sessions open at once of one token (negative: no cap)")
	flags.IntVar(&f.maxInFlight, "max-in-flight", mcpserver.DefaultMaxInFlight, "with --http, the most requests served at once, of all tokens (negative: no cap)")
	flags.IntVar(&f.maxTokenInFlight, "max-token-in-flight", mcpserver.DefaultMaxTenantInFlight, "with --http, the most requests served at once of one token (negative: no cap)")
	flags.BoolVar(&f.search, "search", true, "offer the read-only memory_search tool beside the memory tool (its index is built in memory on the first search)")
	addIndexCacheFlag(cmd, &f.indexCache) // search.go
	flags.BoolVar(&f.stdio, "stdio", false, "serve stdio even when the store's mcp settings in the config file name an HTTP address")
	addOAuthFlags(cmd, &f.oauth) // mcp_oauth.go
	flags.BoolVar(&f.stateless, "stateless", false, "with --http, keep nothing between requests (no sessions), so that any of several replicas behind a load balancer answers any request")
	flags.BoolVar(&f.web, "web", false, "with --http, serve the web console (cloudmem web) at the same address, with the same tokens or OAuth")
	addActorFlag(cmd, &f.actor)
	return cmd
}

// serveStdio serves one session on the app's stdin and stdout.
func (a *app) serveStdio(ctx context.Context, f mcpFlags) error {
	s, err := a.openStore(ctx, readWrite)
	if err != nil {
		return err
	}
	defer blob.Close(s)
	var idx *search.Index
	if f.search {
		if idx, err = openIndex(s, f.indexCache); err != nil { // search.go
			return err
		}
	}
	a.reportStore(ctx, s)
	opts := a.instrumentOptions(memory.Options{})
	if idx != nil {
		opts.Observer = idx.Observer(opts.Observer)
	}
	h, err := a.handler(s, opts)
	if err != nil {
		return err
	}
	actor := f.actor
	if actor == "" {
		actor = defaultActor(a.getenv)
	}
	srv := mcpserver.New(h, &mcpserver.Options{Actor: actor, Version: version(), Logger: a.logger(), Search: idx})
	t := &mcp.IOTransport{Reader: readCloser(a.stdin), Writer: writeCloser(a.stdout)}
	if err := srv.Run(ctx, t); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("serving MCP on stdio: %w", err)
	}
	return nil
}

// serveHTTP serves streamable HTTP on f.http until ctx is done.
func (a *app) serveHTTP(ctx context.Context, f mcpFlags) error {
	tokens, err := a.mcpTokens(f.tokenFile)
	if err != nil {
		return err
	}
	tlsConfig, err := loadTLS(f.tlsCert, f.tlsKey) // web.go
	if err != nil {
		return err
	}
	if f.maxRequestBytes <= 0 {
		return usageErrorf("--max-request-bytes must be positive")
	}
	store, err := a.openStore(ctx, readWrite)
	if err != nil {
		return err
	}
	defer blob.Close(store)
	actor := f.actor
	if actor == "" {
		actor = defaultActor(a.getenv)
	}
	log := slog.New(slog.NewTextHandler(a.stderr, nil))
	oauth, err := f.oauth.open(ctx, tokens, log)
	if err != nil {
		return err
	}
	opts := mcpserver.HTTPOptions{
		OAuth: oauth, Stateless: f.stateless,
		Store: store, Memory: a.instrumentOptions(memory.Options{Logger: log}), Tokens: tokens, Actor: actor,
		MaxRequestBytes: f.maxRequestBytes, Version: version(), Logger: log,
		MaxSessions: f.maxSessions, MaxTenantSessions: f.maxTokenSessions,
		MaxInFlight: f.maxInFlight, MaxTenantInFlight: f.maxTokenInFlight,
	}
	if f.search {
		opts.Search = &search.Options{}
	}
	if f.web {
		console, done, err := a.webServer(ctx, webAuth{tokens: tokens, oauth: oauth}, f.actor, false)
		if err != nil {
			return err
		}
		defer done()
		opts.Fallback = console
	}
	srv, err := mcpserver.NewHTTP(opts)
	if err != nil {
		return err
	}
	addr, err := net.ResolveTCPAddr("tcp", f.http)
	if err != nil {
		return usageErrorf("--http %s: %v", f.http, err)
	}
	if err := srv.CheckAddr(addr); err != nil { // before listening; Serve checks the listener again
		return err
	}
	a.reportStore(ctx, store)
	ln, err := net.Listen("tcp", f.http)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
	}
	log.Info("serving MCP", "url", scheme+"://"+ln.Addr().String()+mcpserver.MCPPath, "tenants", tokens.Len())
	if err := srv.Serve(ctx, ln, tlsConfig); err != nil {
		return err
	}
	log.Info("shut down")
	return nil
}

// mcpTokens reads the token file (file, else $CLOUDMEM_MCP_TOKEN_FILE) and
// adds $CLOUDMEM_MCP_TOKEN as the tenant "default", which sees the whole
// store.
func (a *app) mcpTokens(file string) (*mcpserver.Tokens, error) {
	if file == "" {
		file = a.getenv(mcpTokenFileEnv)
	}
	tokens := &mcpserver.Tokens{}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading the token file: %w", err)
		}
		if tokens, err = mcpserver.ParseTokens(data); err != nil {
			return nil, err
		}
	}
	if token := a.getenv(mcpTokenEnv); token != "" {
		if err := tokens.Add(token, mcpserver.Tenant{Name: "default"}); err != nil {
			return nil, fmt.Errorf("$%s: %w", mcpTokenEnv, err)
		}
	}
	return tokens, nil
}

// version is the module version of the binary, for MCP's serverInfo.
func version() string {
	if info := buildInfo(); info != nil && info.Main.Version != "" {
		return info.Main.Version
	}
	return ""
}

func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func writeCloser(w io.Writer) io.WriteCloser {
	if wc, ok := w.(io.WriteCloser); ok {
		return wc
	}
	return nopWriteCloser{w}
}
