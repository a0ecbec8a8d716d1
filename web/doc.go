// Package web is the web console of a memory store: pages that show people
// who are not developers (a team lead, an auditor, an operator) what the
// agents remember, how it changed and who changed it, and let them restore
// or redact a version. docs/web.md gives every page and text.
//
//	hs, _ := history.New(store, nil)
//	srv, _ := web.New(web.Options{History: hs, Actor: "alice@laptop"})
//	err := srv.Serve(ctx, ln, nil) // or use srv as an http.Handler
//
// Over a mount table, Options.Mounts gives each store with its own history
// (or none): the console composes them with package mount, and reads each
// file's history from its mount.
//
// # Pages
//
// The tree of a directory (sizes, last change, who made it), a file (line
// numbers; images shown; Markdown rendered as text blocks on request), its
// history as a timeline with a diff between any two versions, the store's
// audit log filtered by actor, path and time, and search. Two actions,
// restore and redact, each behind a confirmation page that says exactly
// what will happen; a read-only store or tenant shows no action and refuses
// the requests.
//
// # Reuse
//
// Files are read and written only through a memory.Handler (ReadFile,
// Files; a restore writes with Handler.Write through history.Restore), so
// every rule of the memory tree holds for the console's writes. History,
// the audit log and redaction are package history's; tenants are the MCP
// server's (mcpserver.Tokens, mcpserver.TenantSearch); search is package
// search's.
//
// # Security
//
// Memory content and names are written by a model that reads the web, so
// every byte of them is treated as hostile: pages are html/template, no
// content is ever inserted as HTML, a URL or a style, the only links are
// the console's own, and every response carries a Content-Security-Policy
// that allows no script at all (the console has none). Images are served
// only when they sniff as PNG, JPEG, GIF or WebP, with nosniff and a
// sandboxing policy of their own.
//
// Without tokens the console needs no login and Serve refuses any address
// but loopback. With tokens (the MCP server's token file), a person logs in
// once with a token, which is kept in an HttpOnly, SameSite=Strict cookie
// (Secure over TLS), and sees the tenant's part of the store. With OAuth
// (Options.OAuth, the MCP server's verifier), the token is an access token,
// verified again on every request: its tenant and scope map as over MCP,
// and the login ends when it expires. Every action
// is a POST that must carry the session's CSRF token (an HMAC of the
// session's token) and pass http.CrossOriginProtection, so a forged
// cross-site request changes nothing. The server keeps no session state:
// any replica answers any request.
package web
