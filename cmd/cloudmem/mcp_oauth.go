package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/mcpserver"
)

// oauthFlags are the flags of "cloudmem mcp --http" that make it an OAuth
// resource server (docs/mcp.md, docs/spec.md "OAuth over HTTP").
type oauthFlags struct {
	issuer, audience, claim, tenants string
	leeway                           time.Duration
}

func addOAuthFlags(cmd *cobra.Command, f *oauthFlags) {
	flags := cmd.Flags()
	flags.StringVar(&f.issuer, "oauth-issuer", "", "with --http, accept the JWT access tokens of this authorization server (its issuer `URL`) instead of tokens")
	flags.StringVar(&f.audience, "oauth-audience", "", "with --oauth-issuer, the MCP server's resource `URI` (the URL clients reach /mcp at), which every token's aud must hold")
	flags.StringVar(&f.claim, "oauth-tenant-claim", mcpserver.DefaultTenantClaim, "with --oauth-issuer, the token claim that names the tenant")
	flags.DurationVar(&f.leeway, "oauth-leeway", mcpserver.DefaultLeeway, "with --oauth-issuer, the clock skew allowed on a token's exp, nbf and iat")
	flags.StringVar(&f.tenants, "oauth-tenants", "", "with --oauth-issuer, the tenants of the claim's values, a JSON `FILE` (default: each value its own tenant and prefix)")
}

// set reports whether any OAuth flag is given.
func (f oauthFlags) set() bool {
	return f.issuer != "" || f.audience != "" || f.tenants != "" || f.claim != mcpserver.DefaultTenantClaim || f.leeway != mcpserver.DefaultLeeway
}

// open discovers the issuer and returns the token check, or nil when no
// OAuth flag is given. tokens are the token file's and the environment's,
// which OAuth does not take.
func (f oauthFlags) open(ctx context.Context, tokens *mcpserver.Tokens, log *slog.Logger) (*mcpserver.OAuth, error) {
	switch {
	case !f.set():
		return nil, nil
	case f.issuer == "" || f.audience == "":
		return nil, usageErrorf("--oauth-issuer and --oauth-audience go together")
	case tokens.Len() > 0:
		return nil, usageErrorf("--oauth-issuer takes no bearer tokens (--token-file, $%s, $%s)", mcpTokenFileEnv, mcpTokenEnv)
	case f.leeway <= 0:
		return nil, usageErrorf("--oauth-leeway must be positive")
	}
	var tenants *mcpserver.ClaimTenants
	if f.tenants != "" {
		data, err := os.ReadFile(f.tenants)
		if err != nil {
			return nil, fmt.Errorf("reading the tenant file: %w", err)
		}
		if tenants, err = mcpserver.ParseClaimTenants(data); err != nil {
			return nil, err
		}
	}
	return mcpserver.NewOAuth(ctx, mcpserver.OAuthOptions{
		Issuer: f.issuer, Audience: f.audience, TenantClaim: f.claim, Tenants: tenants, Leeway: f.leeway, Logger: log,
	})
}
