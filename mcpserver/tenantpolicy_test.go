package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	filestore "github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/policy"
)

// A token file gives each tenant, and each mount of a tenant, write
// policies of its own (policy, secrets): a secret one tenant's policy
// rejects another's takes, a mount redacts where its neighbour does not,
// and a tenant's expiry rules hide its expired files. A policy that does
// not load refuses the token file, naming the tenant.
func TestTenantPolicies(t *testing.T) {
	const key = "AKIAZ3MSJV4WWNKWW5FG"
	dir := t.TempDir()
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("expire:\n  - path: /memories/scratch/**\n    after: 1h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := mcpserver.ParseTokens([]byte(`{"tenants": [
		{"name": "alice", "token": "` + aliceToken + `", "prefix": "alice", "secrets": "reject"},
		{"name": "bob", "token": "` + bobToken + `", "prefix": "bob", "policy": "` + pol + `"},
		{"name": "carol", "token": "` + carolToken + `", "mounts": [
			{"name": "notes", "prefix": "carol", "secrets": "redact"},
			{"name": "team", "prefix": "team"}]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	store, err := filestore.Open(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	handler := func(token string) *memory.Handler {
		tenant, ok := ts.Lookup(token)
		if !ok {
			t.Fatal("no tenant")
		}
		h, err := mcpserver.TenantHandler(store, tenant, memory.Options{Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	alice, bob, carol := handler(aliceToken), handler(bobToken), handler(carolToken)
	ctx := context.Background()
	advice := " Memory files keep no secrets: write where a secret is kept (a vault path, an environment variable's name) instead of the secret itself."
	for _, c := range []struct {
		name string
		h    *memory.Handler
		path string
		want memory.Result
	}{
		{"alice rejects", alice, "/memories/k.md", memory.Result{IsError: true,
			Text: "Error: The content for /memories/k.md holds a secret (aws-access-token on line 1); nothing was written." + advice}},
		{"bob takes it", bob, "/memories/k.md", memory.Result{Text: "File created successfully at: /memories/k.md"}},
		{"carol's notes redact", carol, "/memories/notes/k.md", memory.Result{
			Text: "File created successfully at: /memories/notes/k.md\nNote: a secret was replaced by [REDACTED:aws-access-token] on line 1." + advice}},
		{"carol's team takes it", carol, "/memories/team/k.md", memory.Result{Text: "File created successfully at: /memories/team/k.md"}},
	} {
		got := c.h.Create(ctx, c.path, "aws "+key+"\n")
		if got.Text != c.want.Text || got.IsError != c.want.IsError {
			t.Errorf("%s: got %q (error %v), want %q (error %v)", c.name, got.Text, got.IsError, c.want.Text, c.want.IsError)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "carol", "k.md")); err != nil || string(data) != "aws [REDACTED:aws-access-token]\n" {
		t.Errorf("carol's note as stored: %q, %v", data, err)
	}

	// bob's expiry rule: a scratch file last changed two hours ago is gone.
	if r := bob.Create(ctx, "/memories/scratch/old.md", "old\n"); r.IsError {
		t.Fatal(r.Text)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "bob", "scratch", "old.md"), old, old); err != nil {
		t.Fatal(err)
	}
	if got, want := bob.View(ctx, "/memories/scratch/old.md", nil).Text, "Error: The path /memories/scratch/old.md does not exist. Please provide a valid path."; got != want {
		t.Errorf("bob's expired file: got %q, want %q", got, want)
	}
	if got := alice.View(ctx, "/memories/k.md", nil); !got.IsError {
		t.Errorf("alice's refused file exists: %q", got.Text)
	}

	for file, want := range map[string]string{
		`{"tenants": [{"name": "dan", "token": "` + aliceToken + `", "secrets": "loud"}]}`:                                            `mcpserver: bad tokens: tenant 1 ("dan"): secrets="loud": want off, warn, redact or reject`,
		`{"tenants": [{"name": "dan", "token": "` + aliceToken + `", "mounts": [{"name": "m", "policy": "` + dir + `/none.yaml"}]}]}`: `mcpserver: bad tokens: tenant 1 ("dan"): mount "m": policy: open ` + dir + `/none.yaml: no such file or directory`,
	} {
		if _, err := mcpserver.ParseTokens([]byte(file)); err == nil || err.Error() != want {
			t.Errorf("ParseTokens(%s):\n got %v\nwant %s", file, err, want)
		}
	}
}

// A tenant's policy makes the store's stricter, never looser: a policy
// file with only expiry rules, or "secrets": "warn", leaves the store's
// secrets=reject in force. The policy file is read once, when the token
// file is: a file moved or broken afterwards changes nothing.
func TestTenantPolicyNeverLooser(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "expire-only.yaml")
	if err := os.WriteFile(pol, []byte("expire:\n  - path: /memories/scratch/**\n    after: 1h\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := mcpserver.ParseTokens([]byte(`{"tenants": [
		{"name": "plain", "token": "` + aliceToken + `", "prefix": "a"},
		{"name": "expiring", "token": "` + bobToken + `", "prefix": "b", "policy": "` + pol + `"},
		{"name": "lax", "token": "` + carolToken + `", "prefix": "c", "secrets": "warn"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pol, []byte("not: [yaml"), 0o600); err != nil { // broken after the load
		t.Fatal(err)
	}
	fs, err := filestore.Open(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	store := blob.WithPolicy(fs, &policy.Policy{Secrets: policy.Reject}) // a URL's secrets=reject
	want := "Error: The content for /memories/k.md holds a secret (aws-access-token on line 1); nothing was written." +
		" Memory files keep no secrets: write where a secret is kept (a vault path, an environment variable's name) instead of the secret itself."
	for _, token := range []string{aliceToken, bobToken, carolToken} {
		tenant, _ := ts.Lookup(token)
		h, err := mcpserver.TenantHandler(store, tenant, memory.Options{Logger: quiet})
		if err != nil {
			t.Fatalf("%s: %v", tenant.Name, err)
		}
		if got := h.Create(context.Background(), "/memories/k.md", "aws AKIAZ3MSJV4WWNKWW5FG\n"); got.Text != want || !got.IsError {
			t.Errorf("%s: got %q, want the store's refusal", tenant.Name, got.Text)
		}
	}
}
