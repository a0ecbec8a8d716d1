package mcpserver_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// A tenant's max_files, max_file_bytes and view_limit in the token file
// replace the server store's for its view of the store; a mount's own
// replace the tenant's within that mount, whose others fall back on the
// tenant's.
func TestTenantLimits(t *testing.T) {
	tokens := `{"tenants": [
		{"name": "alice", "token": "alice-token-0123456789abcdef0123456789", "prefix": "alice",
		 "max_files": 2, "view_limit": "30"},
		{"name": "bob", "token": "bob-token-0123456789abcdef0123456789ab", "max_file_bytes": 10, "mounts": [
			{"name": "me", "prefix": "users/bob", "max_files": "1"}, {"name": "team", "prefix": "team"}]}
	]}`
	store := mem.New(nil)
	wantTexts(t, tenantHandler(t, store, tokens, "alice-token-0123456789abcdef0123456789"), []step{
		{`{"command":"create","path":"/memories/a.md","file_text":"abcdefgh\nijklmnop\nqrstuvwx\n"}`, "File created successfully at: /memories/a.md"},
		{`{"command":"create","path":"/memories/b.md","file_text":"b"}`, "File created successfully at: /memories/b.md"},
		{`{"command":"create","path":"/memories/c.md","file_text":"c"}`,
			"Error: The memory directory is full: it holds 2 files, the limit is 2. Delete or merge files first."},
		{`{"command":"view","path":"/memories/a.md"}`,
			"Here's the content of /memories/a.md with line numbers:\n     1\tabcdefgh\n[Output truncated: showing lines 1-1 of 4. Use view_range to see more.]"},
	})
	wantTexts(t, tenantHandler(t, store, tokens, "bob-token-0123456789abcdef0123456789ab"), []step{
		{`{"command":"create","path":"/memories/me/a.md","file_text":"a"}`, "File created successfully at: /memories/me/a.md"},
		{`{"command":"create","path":"/memories/me/b.md","file_text":"b"}`,
			"Error: The memory directory is full: it holds 1 files, the limit is 1. Delete or merge files first."},
		{`{"command":"create","path":"/memories/team/x.md","file_text":"0123456789x"}`,
			"Error: File /memories/team/x.md would be 11 bytes, over the limit of 10 bytes per memory file"},
		{`{"command":"create","path":"/memories/team/y.md","file_text":"y"}`, "File created successfully at: /memories/team/y.md"},
	})
}

// step is one command input and the whole text it must answer.
type step struct{ input, want string }

// wantTexts runs each step's input through h, in order, and compares the
// whole text of its answer.
func wantTexts(t *testing.T, h *memory.Handler, steps []step) {
	t.Helper()
	for _, s := range steps {
		if got := h.Execute(t.Context(), []byte(s.input)).Text; got != s.want {
			t.Errorf("%s:\n got %q\nwant %q", s.input, got, s.want)
		}
	}
}

// tenantHandler returns TenantHandler over store for the tenant of token in
// the token file tokens.
func tenantHandler(t *testing.T, store blob.Store, tokens, token string) *memory.Handler {
	t.Helper()
	ts, err := mcpserver.ParseTokens([]byte(tokens))
	if err != nil {
		t.Fatal(err)
	}
	tenant, ok := ts.Lookup(token)
	if !ok {
		t.Fatalf("no tenant has the token %q", token)
	}
	h, err := mcpserver.TenantHandler(store, tenant, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A bad limit in the token file is refused when the file is read, with the
// store URL's text for the same value.
func TestTenantLimitsRefused(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "max_files": 0}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: max_files="0": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "mounts": [{"name": "m", "max_file_bytes": "off"}]}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): mount "m": storeurl: max_file_bytes="off": want a whole number from 1 to 1073741824`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "view_limit": 1.5}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: view_limit="1.5": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "max_files": true}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: max_files="true": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "max_files": ""}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: max_files="\"\"": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "mounts": [{"name": "m", "view_limit": [30]}]}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): mount "m": storeurl: view_limit="[30]": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "max_files": 1e3}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: max_files="1e3": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "max_file_bytes": -1}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: max_file_bytes="-1": want a whole number from 1 to 1073741824`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "max_files": 99999999999999999999}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: max_files="99999999999999999999": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "max_files": "null"}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: max_files="null": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"name": "a", "token": "a-token-0123456789abcdef", "max_files": "OFF"}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): storeurl: max_files="OFF": want a whole number from 1 to 1000000000, or off`},
	} {
		_, err := mcpserver.ParseTokens([]byte(tc.file))
		if err == nil || err.Error() != tc.want || !errors.Is(err, mcpserver.ErrBadTokens) {
			t.Errorf("%s:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}
}

// A mount that sets no limit of its own has its tenant's, even when the
// server's store carries limits of its own (its URL's max_files and
// max_file_bytes): the tenant's replace the store's in every part of its
// view, its mounts included.
func TestTenantLimitsOverStoreLimits(t *testing.T) {
	store := blob.WithLimits(mem.New(nil), blob.Limits{MaxFiles: 100, MaxFileBytes: 100})
	h := tenantHandler(t, store, `{"tenants": [
		{"name": "bob", "token": "bob-token-0123456789abcdef0123456789ab", "max_files": 1, "max_file_bytes": 10, "mounts": [
			{"name": "me", "prefix": "users/bob", "max_file_bytes": 20}, {"name": "team", "prefix": "team"}]}
	]}`, "bob-token-0123456789abcdef0123456789ab")
	wantTexts(t, h, []step{
		{`{"command":"create","path":"/memories/team/x.md","file_text":"0123456789x"}`,
			"Error: File /memories/team/x.md would be 11 bytes, over the limit of 10 bytes per memory file"},
		{`{"command":"create","path":"/memories/team/a.md","file_text":"a"}`, "File created successfully at: /memories/team/a.md"},
		{`{"command":"create","path":"/memories/team/b.md","file_text":"b"}`,
			"Error: The memory directory is full: it holds 1 files, the limit is 1. Delete or merge files first."},
		{`{"command":"create","path":"/memories/me/x.md","file_text":"0123456789x"}`, "File created successfully at: /memories/me/x.md"},
		{`{"command":"create","path":"/memories/me/y.md","file_text":"y"}`,
			"Error: The memory directory is full: it holds 1 files, the limit is 1. Delete or merge files first."},
	})
}

// TenantSearch, which the web console and a server with search use, builds
// the tenant's view as TenantHandler does: the tenant's and its mounts'
// limits hold there too, over the store's.
func TestTenantSearchLimits(t *testing.T) {
	tokens, err := mcpserver.ParseTokens([]byte(`{"tenants": [
		{"name": "bob", "token": "bob-token-0123456789abcdef0123456789ab", "max_files": 1, "mounts": [
			{"name": "me", "prefix": "users/bob", "max_files": 2}, {"name": "team", "prefix": "team"}]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := tokens.Lookup("bob-token-0123456789abcdef0123456789ab")
	h, _, err := mcpserver.TenantSearch(blob.WithLimits(mem.New(nil), blob.Limits{MaxFiles: 100}), bob, memory.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	full := func(n int) string {
		return fmt.Sprintf("Error: The memory directory is full: it holds %d files, the limit is %d. Delete or merge files first.", n, n)
	}
	wantTexts(t, h, []step{
		{`{"command":"create","path":"/memories/team/a.md","file_text":"a"}`, "File created successfully at: /memories/team/a.md"},
		{`{"command":"create","path":"/memories/team/b.md","file_text":"b"}`, full(1)},
		{`{"command":"create","path":"/memories/me/a.md","file_text":"a"}`, "File created successfully at: /memories/me/a.md"},
		{`{"command":"create","path":"/memories/me/b.md","file_text":"b"}`, "File created successfully at: /memories/me/b.md"},
		{`{"command":"create","path":"/memories/me/c.md","file_text":"c"}`, full(2)},
	})
}
