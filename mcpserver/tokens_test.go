package mcpserver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"math/big"
	"net"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/mcpserver"
)

func TestParseTokens(t *testing.T) {
	sum := sha256.Sum256([]byte("hashed-token-0123456789"))
	ts, err := mcpserver.ParseTokens([]byte(`{"tenants": [
		{"name": "alice", "token": "alice-token-0123456789", "prefix": "team/alice"},
		{"name": "ci@build", "token_sha256": "` + hex.EncodeToString(sum[:]) + `", "readonly": true}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ts.Len() != 2 {
		t.Errorf("Len = %d", ts.Len())
	}
	for token, want := range map[string]*mcpserver.Tenant{
		"alice-token-0123456789":   {Name: "alice", Prefix: "team/alice"},
		"hashed-token-0123456789":  {Name: "ci@build", ReadOnly: true},
		"alice-token-012345678":    nil,
		"":                         nil,
		hex.EncodeToString(sum[:]): nil, // the hash is not the token
	} {
		got, ok := ts.Lookup(token)
		if (want == nil) == ok || (want != nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("Lookup(%q) = %+v, %v; want %+v", token, got, ok, want)
		}
	}
	if err := ts.Add("env-token-0123456789", mcpserver.Tenant{Name: "default"}); err != nil {
		t.Errorf("Add: %v", err)
	}
	if err := ts.Add("short", mcpserver.Tenant{Name: "x"}); err == nil || err.Error() != `mcpserver: bad tokens: the token of "x" is shorter than 16 bytes` {
		t.Errorf("Add of a short token: %v", err)
	}
	var nilTokens *mcpserver.Tokens
	if _, ok := nilTokens.Lookup("alice-token-0123456789"); ok || nilTokens.Len() != 0 {
		t.Errorf("a nil Tokens holds a token")
	}
}

func TestParseTokensErrors(t *testing.T) {
	for file, want := range map[string]string{
		`{"tenants": [{"name": "a", "token": "0123456789abcdef", "stores": []}]}`:                               `mcpserver: bad tokens: the token file is not valid: json: unknown field "stores"`,
		`{"tenants": [{"name": "a", "token": "short"}]}`:                                                        `mcpserver: bad tokens: tenant 1 ("a"): the token is shorter than 16 bytes`,
		`{"tenants": [{"name": "a"}]}`:                                                                          `mcpserver: bad tokens: tenant 1 ("a"): token_sha256 must be 64 hex digits`,
		`{"tenants": [{"name": "a", "token": "0123456789abcdef", "token_sha256": "00"}]}`:                       `mcpserver: bad tokens: tenant 1 ("a") has both token and token_sha256`,
		`{"tenants": [{"name": "a b", "token": "0123456789abcdef"}]}`:                                           `mcpserver: bad tokens: tenant 1 ("a b"): a name has 1 to 64 letters, digits and . _ @ + -`,
		`{"tenants": [{"name": "a", "token": "0123456789abcdef", "prefix": "../x"}]}`:                           `mcpserver: bad tokens: tenant 1 ("a"): prefix "../x" is not a valid store directory`,
		`{"tenants": [{"name": "a", "token": "0123456789abcdef", "prefix": ".cloudmem"}]}`:                      `mcpserver: bad tokens: tenant 1 ("a"): prefix ".cloudmem" is not a valid store directory`,
		`{"tenants": [{"name": "a", "token": "0123456789abcdef"}, {"name": "a", "token": "0123456789abcdeg"}]}`: `mcpserver: bad tokens: tenant 2 ("a"): the name appears twice`,
		`{"tenants": [{"name": "a", "token": "0123456789abcdef"}, {"name": "b", "token": "0123456789abcdef"}]}`: `mcpserver: bad tokens: tenant 2 ("b"): the same token as "a"`,
		`{"tenants": []} {}`: `mcpserver: bad tokens: the token file is not valid: more than one JSON value`,
	} {
		_, err := mcpserver.ParseTokens([]byte(file))
		if err == nil || err.Error() != want || !errors.Is(err, mcpserver.ErrBadTokens) {
			t.Errorf("ParseTokens(%s):\n got %v\nwant %s", file, err, want)
		}
	}
}

// TestServeTLS serves over TLS with a certificate made for the test, and
// runs a command through it.
func TestServeTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)

	srv, err := mcpserver.NewHTTP(mcpserver.HTTPOptions{Store: mem.New(nil), Tokens: teamTokens(t), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error)
	go func() {
		served <- srv.Serve(ctx, ln, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	}()
	client := &http.Client{Transport: bearer{token: aliceToken, next: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: "https://" + ln.Addr().String() + mcpserver.MCPPath, HTTPClient: client, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "File created successfully at: /memories/tls.md"
	if got := call(ctx, cs, []byte(`{"command":"create","path":"/memories/tls.md","file_text":"over TLS"}`)); got.Text != want || got.IsError {
		t.Errorf("create over TLS: %+v, want %q", got, want)
	}
	// Plain HTTP to the TLS port gets no MCP answer.
	if resp, err := http.Get("http://" + ln.Addr().String() + mcpserver.HealthPath); err == nil {
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("plain HTTP to the TLS port: %s", resp.Status)
		}
		resp.Body.Close()
	}
	cs.Close()
	stop()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}
