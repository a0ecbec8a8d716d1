// Package mcpserver serves a cloudmem memory over the Model Context Protocol
// (MCP), so that Claude Code, Claude Desktop and every other MCP client can
// use any store cloudmem opens (a local directory, S3, GCS, Azure, Redis,
// encrypted or not) as the model's memory. It is built on the official Go SDK,
// github.com/modelcontextprotocol/go-sdk.
//
// # The tool
//
// A Server offers one tool, named "memory", whose input is the input of
// Claude's memory tool (memory_20250818): a command (view, create,
// str_replace, insert, delete, rename) and that command's fields. The
// arguments go to memory.Handler.Execute exactly as the client sent them,
// so a call through MCP decodes, validates and answers exactly as the
// handler does: the result is the handler's text as one text content, with
// isError set on an error, or one image content for the view of an image
// file. The tool's description tells the model how to keep its memory.
//
// # Resources
//
// Every memory file is also an MCP resource, so that a client can browse
// what the model remembers: resources/list lists them all, and
// resources/read returns a file's exact bytes (text for UTF-8 content, a
// blob otherwise). The file /memories/notes/a.md is the resource
// memory:///memories/notes/a.md (each segment percent-encoded as a URL path
// needs). A client may subscribe to a resource; a command that changes the
// file through this server (the file itself or a directory above it) then
// sends notifications/resources/updated for it. Changes made by other
// writers of a shared store are not watched.
//
// # Commands run to their end
//
// A command, once started, is not cancelled when its client goes away or
// the server shuts down: it runs on a context detached from the request's
// cancellation, bounded by Options.CommandTimeout, so that a disconnect
// never stops a command between two storage calls. (The handler leaves
// every file at its old or its new state at every instant in any case; see
// package memory.) Server.Wait waits for the commands in flight.
//
// # Stdio
//
// Server.Run serves one session over any mcp.Transport, such as the SDK's
// mcp.StdioTransport (a process's stdin and stdout), as the SDK serves it:
// this package adds nothing on the wire. (It once had a stdio transport
// and result encoding of its own; on a real store they saved nothing worth
// their code: docs/benchmarks-by-hand.md, "MCP overhead".)
//
// # HTTP
//
// HTTP serves MCP over the streamable HTTP transport for a team: bearer
// tokens (see Tokens) name tenants, each tenant sees its own part of the
// store (a key prefix, optionally read-only) through its own Server, and a
// session belongs to the tenant that opened it. HTTP also serves a health
// endpoint, limits request sizes, sets timeouts and shuts down gracefully.
// It refuses to serve on an address other than loopback without tokens.
//
// With an OAuth (HTTPOptions.OAuth), HTTP is an OAuth 2.1 resource server
// instead: it takes the signed JWT access tokens of one issuer for its own
// resource URI, maps a claim of each to a tenant by the token file's rules,
// and publishes its protected resource metadata (RFC 9728). With
// HTTPOptions.Stateless it keeps nothing between requests, so that replicas
// behind a load balancer answer any request. It caps the requests in flight
// per tenant and in all, answers a readiness check (ReadyPath) only while
// the store answers, continues the client's trace context, and logs each
// request as one structured line without tokens.
package mcpserver
