package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/web"
)

func init() { register(newWebCmd) }

// webFlags are the flags of "cloudmem web".
type webFlags struct {
	http, tokenFile, tlsCert, tlsKey, actor string
	readOnly                                bool
	oauth                                   oauthFlags
}

// newWebCmd is "cloudmem web": the web console (package web) of the store.
func newWebCmd(a *app) *cobra.Command {
	var f webFlags
	cmd := &cobra.Command{
		Use:   "web [--http ADDR] [--token-file FILE | --oauth-issuer URL --oauth-audience URI] [--tls-cert FILE --tls-key FILE] [--readonly]",
		Short: "Serve a web console of the store: its files, their history, the audit log, search",
		Long: "Serves a web console at http://ADDR (default " + web.DefaultAddr + "): the tree of the memory\n" +
			"files with their sizes, last change and author; each file with line numbers (images shown,\n" +
			"Markdown on request); its history as a timeline, with the diff between any two versions;\n" +
			"the store's audit log, filtered by actor, path and time; and search. A version can be\n" +
			"restored or redacted, each after a confirmation page, recorded with your name as author\n" +
			"(--actor, default user@host). --readonly shows no action. With --mount, each mounted store\n" +
			"shows at /memories/NAME with its own history; a read-only mount shows no action.\n\n" +
			"Without tokens it serves loopback addresses only, with no login. With the MCP server's\n" +
			"tokens (--token-file, else $" + mcpTokenFileEnv + "; $" + mcpTokenEnv + " adds one for the whole\n" +
			"store), each person logs in once with a token and sees that tenant's part of the store,\n" +
			"read-only for a read-only tenant. With --oauth-issuer and --oauth-audience (the MCP server's\n" +
			"OAuth flags), each person logs in with an access token of that issuer instead, checked on every\n" +
			"request as the MCP server checks it: a token without memory:write shows no action. See docs/web.md.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			tokens, err := a.mcpTokens(f.tokenFile)
			if err != nil {
				return err
			}
			oauth, err := f.oauth.open(ctx, tokens, slog.New(slog.NewTextHandler(a.stderr, nil))) // mcp_oauth.go
			if err != nil {
				return err
			}
			srv, done, err := a.webServer(ctx, webAuth{tokens: tokens, oauth: oauth}, f.actor, f.readOnly)
			if err != nil {
				return err
			}
			defer done()
			tlsConfig, err := loadTLS(f.tlsCert, f.tlsKey)
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
			ln, err := net.Listen("tcp", f.http)
			if err != nil {
				return err
			}
			scheme := "http"
			if tlsConfig != nil {
				scheme = "https"
			}
			fmt.Fprintf(a.stderr, "cloudmem web: serving %s://%s/\n", scheme, ln.Addr())
			return srv.Serve(ctx, ln, tlsConfig)
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&f.http, "http", web.DefaultAddr, "serve on `ADDR` (host:port)")
	flags.StringVar(&f.tokenFile, "token-file", "", "the tokens and their tenants, the MCP server's JSON `FILE` (default $"+mcpTokenFileEnv+")")
	flags.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (PEM; with --tls-key)")
	flags.StringVar(&f.tlsKey, "tls-key", "", "the private key `FILE` of --tls-cert (PEM)")
	flags.BoolVar(&f.readOnly, "readonly", false, "show the store without the restore and redact actions")
	addOAuthFlags(cmd, &f.oauth) // mcp_oauth.go
	addActorFlag(cmd, &f.actor)
	return cmd
}

// webAuth is who may log in to the console: the token file's tenants, or
// the tenants of OAuth access tokens (both nil: no login).
type webAuth struct {
	tokens *mcpserver.Tokens
	oauth  *mcpserver.OAuth
}

// webServer opens the store with its history (or each store of the --mount
// table with its own) and returns the console over it, for auth, and the
// function that closes the stores.
func (a *app) webServer(ctx context.Context, auth webAuth, actor string, readOnlyConsole bool) (*web.Server, func(), error) {
	acc := readWrite
	if readOnlyConsole {
		acc = readOnly
	}
	if actor == "" {
		actor = defaultActor(a.getenv)
	}
	opts := web.Options{Memory: a.instrumentOptions(memory.Options{}), ReadOnly: readOnlyConsole,
		Tokens: auth.tokens, OAuth: auth.oauth, Actor: actor, Logger: slog.New(slog.NewTextHandler(a.stderr, nil))}
	var done func()
	var err error
	if len(a.mounts) > 0 {
		opts.Mounts, done, err = a.openWebMounts(ctx, acc)
	} else {
		opts.History, opts.Store, done, err = a.openHistory(ctx, acc)
	}
	if err != nil {
		return nil, nil, err
	}
	srv, err := web.New(opts)
	if err != nil {
		done()
		return nil, nil, err
	}
	return srv, done, nil
}

// openWebMounts opens the store of every --mount for acc, each with a
// history Store of its own in its URL's layers, configured by the URL's
// history parameters (openWithHistory), and returns them as the console's
// mounts with the function that closes them. It refuses mounts whose
// stores overlap before it opens any (checkOverlap). On failure it closes
// what it opened.
func (a *app) openWebMounts(ctx context.Context, acc access) ([]web.Mount, func(), error) {
	if a.storeFlag != "" {
		return nil, nil, usageErrorf("--store and --mount cannot be used together: put the store under a --mount too")
	}
	specs, err := parseMounts(a.mounts) // mount.go
	if err != nil {
		return nil, nil, err
	}
	if err := a.checkOverlap(specs); err != nil {
		return nil, nil, err
	}
	var mounts []web.Mount
	var closers []func()
	done := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, spec := range specs {
		hs, write, closeStore, err := a.openWithHistory(ctx, spec.url, acc, nil) // history.go
		if err != nil {
			done()
			return nil, nil, fmt.Errorf("mount %s: %w", spec.name, err)
		}
		closers = append(closers, closeStore)
		mounts = append(mounts, web.Mount{Name: spec.name, History: hs, Store: write, ReadOnly: spec.readOnly})
	}
	return mounts, done, nil
}

// loadTLS returns the TLS configuration of --tls-cert and --tls-key, nil
// when neither is given.
func loadTLS(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case (certFile == "") != (keyFile == ""):
		return nil, usageErrorf("--tls-cert and --tls-key go together")
	case certFile == "":
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
