package azure

// These tests need no server. The store's behaviour against one (blobtest,
// the memory suites, SDK retries, listing order) is tested in
// integration/azure_test.go, against Azurite.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/cloudmem/cloudmem/blob"
)

// devConn is Azurite's well-known development connection string (its key
// is public).
const devConn = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
	"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
	"BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"

func TestParseURL(t *testing.T) {
	tests := []struct {
		url, container, prefix string
		opts                   Options
	}{
		{"azblob://c", "c", "", Options{}},
		{"azblob://c/", "c", "", Options{}},
		{"azblob://cloudmem-test/agent1", "cloudmem-test", "agent1", Options{}},
		{"azblob://c/agents/one/", "c", "agents/one", Options{}},
		{"azblob://c/agents?prefix=one", "c", "agents/one", Options{}},
		{"azblob://c?prefix=/one/", "c", "one", Options{}},
		{"azblob://c/a%20b?account=acct", "c", "a b", Options{Account: "acct"}},
		{"azblob://c?account=acct&endpoint=https://acct.blob.core.chinacloudapi.cn", "c", "",
			Options{Account: "acct", Endpoint: "https://acct.blob.core.chinacloudapi.cn"}},
		{"azblob://c?endpoint=http://127.0.0.1:10000/devstoreaccount1", "c", "",
			Options{Endpoint: "http://127.0.0.1:10000/devstoreaccount1"}},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		name, prefix, opts, err := parseURL(u)
		if err != nil {
			t.Errorf("parseURL(%s): %v", tt.url, err)
			continue
		}
		if name != tt.container || prefix != tt.prefix || *opts != tt.opts {
			t.Errorf("parseURL(%s) = %q, %q, %+v; want %q, %q, %+v", tt.url, name, prefix, *opts, tt.container, tt.prefix, tt.opts)
		}
	}
}

func TestParseURLErrors(t *testing.T) {
	tests := []struct{ url, want string }{
		{"azblob://c?acount=x", `storeurl: azblob: unknown URL parameter "acount" (azblob accepts: account, endpoint; every scheme accepts: `},
		{"azblob://c?sig=hunter2&sv=2024", `unknown URL parameters "sig", "sv"`},
		{"azblob://c?account=a&account=b", "azure: parameter account given 2 times"},
		{"azblob://acct:hunter2@c", "azure: a store URL carries no credentials"},
		{"azblob:///prefix", "azure: the URL names no container"},
		{"azblob:c", "azure: the URL names no container"},
		{"azblob://c:10000", `azure: container "c:10000" has a port`},
		{"azblob://c/a/../b", `azure: prefix "a/../b"`},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		_, _, _, err = parseURL(u)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseURL(%s) error = %v, want one containing %q", tt.url, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("parseURL(%s) error %q shows the secret", tt.url, err)
		}
	}
}

func TestOpen(t *testing.T) {
	ctx := context.Background()
	t.Setenv(ConnectionStringEnv, "")
	tests := []struct {
		name, container, prefix string
		opts                    *Options
		url, dir                string // the container URL and escaped prefix of the store
	}{
		{"account", "c", "", &Options{Account: "acct"}, "https://acct.blob.core.windows.net/c", ""},
		{"sovereign", "c", "/a/b/", &Options{Account: "acct", Endpoint: "https://acct.blob.core.chinacloudapi.cn/"},
			"https://acct.blob.core.chinacloudapi.cn/c", "a/b/"},
		{"emulator", "c", `x\y[`, &Options{Endpoint: "http://127.0.0.1:10000/devstoreaccount1"},
			"http://127.0.0.1:10000/devstoreaccount1/c", "x[]y[[/"},
		{"emulator and account", "c", "", &Options{Account: "devstoreaccount1", Endpoint: "http://127.0.0.1:10000/devstoreaccount1"},
			"http://127.0.0.1:10000/devstoreaccount1/c", ""},
		{"connection string", "cloudmem-test", "agent1", &Options{ConnectionString: devConn},
			"http://127.0.0.1:10000/devstoreaccount1/cloudmem-test", "agent1/"},
		{"connection string naming the same account", "c", "", &Options{ConnectionString: devConn, Account: "devstoreaccount1",
			Endpoint: "http://127.0.0.1:10000/devstoreaccount1/"}, "http://127.0.0.1:10000/devstoreaccount1/c", ""},
	}
	for _, tt := range tests {
		s, err := Open(ctx, tt.container, tt.prefix, tt.opts)
		if err != nil {
			t.Errorf("%s: Open: %v", tt.name, err)
			continue
		}
		st := blob.Unwrap(s).(*store)
		if got := st.client.URL(); got != tt.url || st.dir != tt.dir {
			t.Errorf("%s: store on %q, dir %q; want %q, %q", tt.name, got, st.dir, tt.url, tt.dir)
		}
	}

	t.Setenv(ConnectionStringEnv, devConn)
	s, err := Open(ctx, "c", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := blob.Unwrap(s).(*store).client.URL(), "http://127.0.0.1:10000/devstoreaccount1/c"; got != want {
		t.Errorf("Open with %s set: store on %q, want %q", ConnectionStringEnv, got, want)
	}

	client, err := container.NewClientWithNoCredential("http://127.0.0.1:10000/devstoreaccount1/mine", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "mine"} {
		if s, err := Open(ctx, name, "p", &Options{Client: client}); err != nil || blob.Unwrap(s).(*store).client != client {
			t.Errorf("Open(%q) with Options.Client: %v", name, err)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	t.Setenv(ConnectionStringEnv, "")
	client, err := container.NewClientWithNoCredential("http://127.0.0.1:10000/devstoreaccount1/mine", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, container, prefix string
		opts                    *Options
		want                    string
	}{
		{"no account", "c", "", nil, "azure: no account: set account= in the URL, Options.Account or Options.Endpoint, or AZURE_STORAGE_CONNECTION_STRING"},
		{"no container", "", "", &Options{Account: "acct"}, `azure: invalid container name ""`},
		{"slash in container", "a/b", "", &Options{Account: "acct"}, `azure: invalid container name "a/b"`},
		{"bad prefix", "c", "a//b", &Options{Account: "acct"}, "azure: prefix: blob: invalid key: empty segment"},
		{"bad account", "c", "", &Options{Account: "evil.example/x"}, `azure: invalid account name "evil.example/x"`},
		{"endpoint without scheme", "c", "", &Options{Endpoint: "127.0.0.1:10000"}, "azure: endpoint: want http(s)://HOST[:PORT][/ACCOUNT]"},
		{"endpoint with SAS", "c", "", &Options{Endpoint: "https://acct.blob.core.windows.net/?sv=1&sig=secret"}, "azure: endpoint: a URL with user information or a query is not accepted"},
		{"endpoint with password", "c", "", &Options{Endpoint: "https://acct:secret@acct.blob.core.windows.net"}, "azure: endpoint: a URL with user information"},
		{"endpoint of another account", "c", "", &Options{Account: "acct", Endpoint: "https://other.blob.core.windows.net"},
			`azure: endpoint https://other.blob.core.windows.net does not name account "acct"`},
		{"client and account", "", "", &Options{Client: client, Account: "acct"}, "azure: Options.Client is set"},
		{"client of another container", "theirs", "", &Options{Client: client}, `azure: container "theirs" differs from the client's container "mine"`},
		{"connection string of another account", "c", "", &Options{ConnectionString: devConn, Account: "prod"},
			`azure: account "prod" differs from the connection string's AccountName "devstoreaccount1"`},
		{"connection string of another endpoint", "c", "", &Options{ConnectionString: devConn, Endpoint: "https://prod.blob.core.windows.net"},
			"azure: endpoint differs from the connection string's BlobEndpoint"},
		{"malformed connection string", "c", "", &Options{ConnectionString: "AccountKey=secret;junk"}, "azure: connection string: want NAME=VALUE pairs"},
		{"connection string without endpoint", "c", "", &Options{ConnectionString: "AccountKey=secret"}, "azure: connection string: "},
	}
	for _, tt := range tests {
		_, err := Open(ctx, tt.container, tt.prefix, tt.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: Open error = %v, want one starting %q", tt.name, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "Eby8")) {
			t.Errorf("%s: Open error %q shows a secret", tt.name, err)
		}
	}
}

// TestNoRequest checks the calls that must fail before any request: invalid
// keys, names too long for Azure, cancelled contexts, versions that are not
// ETags. The client points at a port where nothing listens, so a request
// would fail differently.
func TestNoRequest(t *testing.T) {
	client, err := container.NewClientWithNoCredential("http://127.0.0.1:1/devstoreaccount1/c", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), "", "/agents/one/", &Options{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	long := strings.Repeat("k", maxNameLen-len("agents/one/")+1)       // valid, but over Azure's limit with the prefix
	longer := strings.Repeat("[", (maxNameLen-len("agents/one/"))/2+1) // short enough as a key, too long escaped
	for _, key := range []string{"", "a//b", "../a", "a/", long, longer} {
		if _, err := s.Put(ctx, key, nil, blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%.20q): error = %v, want ErrInvalidKey", key, err)
		}
		if _, _, err := s.Get(ctx, key, blob.MaxObjectBytes); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Get(%.20q): error = %v, want ErrInvalidKey", key, err)
		}
		if err := s.Delete(ctx, key, blob.Cond{}); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Delete(%.20q): error = %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := s.Put(ctx, "k", nil, blob.Cond{IfAbsent: true, IfVersion: "0x8D"}); err == nil || errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Put with both conditions: error = %v, want a Cond error", err)
	}
	for _, v := range []string{"*", `"0x8D"`, "0x8D\r\nX-Evil: 1"} {
		if _, err := s.Put(ctx, "k", nil, blob.Cond{IfVersion: v}); !errors.Is(err, blob.ErrPrecondition) {
			t.Errorf("Put(IfVersion: %q): error = %v, want ErrPrecondition", v, err)
		}
		if err := s.Delete(ctx, "k", blob.Cond{IfVersion: v}); !errors.Is(err, blob.ErrPrecondition) {
			t.Errorf("Delete(IfVersion: %q): error = %v, want ErrPrecondition", v, err)
		}
	}
	for _, prefix := range []string{"/", "a//", "../"} {
		for _, err := range s.List(ctx, prefix) {
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Errorf("List(%q): error = %v, want ErrInvalidKey", prefix, err)
			}
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	calls := map[string]func() error{
		"Get":    func() error { _, _, err := s.Get(cancelled, "k", blob.MaxObjectBytes); return err },
		"Stat":   func() error { _, err := s.Stat(cancelled, "k"); return err },
		"Put":    func() error { _, err := s.Put(cancelled, "k", nil, blob.Cond{}); return err },
		"Delete": func() error { return s.Delete(cancelled, "k", blob.Cond{}) },
		"List": func() error {
			for _, err := range s.List(cancelled, "") {
				return err
			}
			return nil
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error = %v, want context.Canceled", name, err)
		}
	}
}

// responseErr builds an error as the SDK returns it for a request to a URL
// with a SAS token.
func responseErr(status int, code string) error {
	u, _ := url.Parse("https://acct.blob.core.windows.net/c/agents/k?sv=2024&sig=secret")
	return &azcore.ResponseError{
		ErrorCode:   code,
		StatusCode:  status,
		RawResponse: &http.Response{StatusCode: status, Request: &http.Request{Method: http.MethodPut, URL: u}},
	}
}

func TestMapErr(t *testing.T) {
	tests := []struct {
		err      error
		sentinel error // nil: neither ErrNotExist nor ErrPrecondition
		msg      string
	}{
		{responseErr(404, "BlobNotFound"), blob.ErrNotExist, `azure: "k": blob: object does not exist (PUT 404 BlobNotFound)`},
		{responseErr(404, "ContainerNotFound"), nil, `azure: "k": PUT 404 ContainerNotFound`},
		{responseErr(409, "BlobAlreadyExists"), blob.ErrPrecondition, `azure: "k": blob: precondition failed (PUT 409 BlobAlreadyExists)`},
		{responseErr(412, "ConditionNotMet"), blob.ErrPrecondition, `azure: "k": blob: precondition failed (PUT 412 ConditionNotMet)`},
		{responseErr(403, "AuthorizationPermissionMismatch"), nil, `azure: "k": PUT 403 AuthorizationPermissionMismatch`},
		{responseErr(500, ""), nil, `azure: "k": PUT 500 (no error code)`},
		{context.Canceled, nil, `azure: "k": context canceled`},
	}
	for _, tt := range tests {
		err := mapErr("k", tt.err)
		if err.Error() != tt.msg {
			t.Errorf("mapErr(%v) = %q, want %q", tt.err, err, tt.msg)
		}
		for _, s := range []error{blob.ErrNotExist, blob.ErrPrecondition} {
			if got, want := errors.Is(err, s), s == tt.sentinel; got != want {
				t.Errorf("mapErr(%v): errors.Is(err, %v) = %v, want %v", tt.err, s, got, want)
			}
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("mapErr(%v) lost the SDK error", tt.err)
		}
		var resp *azcore.ResponseError
		if got, want := errors.As(err, &resp), tt.err != context.Canceled; got != want {
			t.Errorf("mapErr(%v): errors.As(*azcore.ResponseError) = %v, want %v", tt.err, got, want)
		}
	}
	err := preconditionErr("k", responseErr(404, "BlobNotFound"))
	if !errors.Is(err, blob.ErrPrecondition) || errors.Is(err, blob.ErrNotExist) {
		t.Errorf("preconditionErr(404) = %v: want ErrPrecondition only", err)
	}
}

func TestMetaValue(t *testing.T) {
	id := "00112233445566778899aabbccddeeff"
	for _, meta := range []map[string]*string{{"cloudmemwrite": &id}, {"Cloudmemwrite": &id}, {"CloudMemWrite": &id, "other": nil}} {
		if got := metaValue(meta, metaWriteID); got != id {
			t.Errorf("metaValue(%v) = %q", meta, got)
		}
	}
	if got := metaValue(map[string]*string{"cloudmemwrite": nil}, metaWriteID); got != "" {
		t.Errorf("metaValue of a nil value = %q", got)
	}
}
