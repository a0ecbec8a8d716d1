package mcpserver_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mcpserver"
	"github.com/cloudmem/cloudmem/memory"
)

// A tenant's mounts place parts of the server's store in its /memories: the
// team's knowledge read-only, beside its own notes, which no other tenant
// reaches.
func TestTenantMounts(t *testing.T) {
	tokens, err := mcpserver.ParseTokens([]byte(`{"tenants": [
		{"name": "alice", "token": "alice-token-0123456789abcdef0123456789", "mounts": [
			{"name": "team", "prefix": "team", "readonly": true}, {"name": "me", "prefix": "users/alice"}]},
		{"name": "bob", "token": "bob-token-0123456789abcdef0123456789ab", "mounts": [
			{"name": "team", "prefix": "team", "readonly": true}, {"name": "me", "prefix": "users/bob"}]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	store := mem.New(nil)
	if _, err := store.Put(ctx, "team/style.md", []byte("Use tabs.\n"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	alice, _ := tokens.Lookup("alice-token-0123456789abcdef0123456789")
	bob, _ := tokens.Lookup("bob-token-0123456789abcdef0123456789ab")
	ha, err := mcpserver.TenantHandler(store, alice, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hb, err := mcpserver.TenantHandler(store, bob, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		who, input, want string
	}{
		{"alice", `{"command":"create","path":"/memories/me/a.md","file_text":"alice's\n"}`, "File created successfully at: /memories/me/a.md"},
		{"alice", `{"command":"create","path":"/memories/team/a.md","file_text":"x"}`, "Error: The memory directory is read-only: create is not allowed"},
		{"alice", `{"command":"view","path":"/memories"}`, "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			"18B\t/memories\n8B\t/memories/me/\n8B\t/memories/me/a.md\n10B\t/memories/team/\n10B\t/memories/team/style.md"},
		{"bob", `{"command":"view","path":"/memories"}`, "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n" +
			"10B\t/memories\n0B\t/memories/me/\n10B\t/memories/team/\n10B\t/memories/team/style.md"},
		{"bob", `{"command":"view","path":"/memories/me/a.md"}`, "Error: The path /memories/me/a.md does not exist. Please provide a valid path."},
		{"bob", `{"command":"view","path":"/memories/users/alice/a.md"}`, "Error: The path /memories/users/alice/a.md does not exist. Please provide a valid path."},
	}
	for _, s := range steps {
		h := ha
		if s.who == "bob" {
			h = hb
		}
		if got := h.Execute(ctx, []byte(s.input)).Text; got != s.want {
			t.Errorf("%s: %s\n got %q\nwant %q", s.who, s.input, got, s.want)
		}
	}
	all, err := blob.ListAll(ctx, store, "")
	// The handler's bookkeeping (under .cloudmem) is not a memory file.
	keys := slices.DeleteFunc(all, func(i blob.Info) bool { return blob.IsReserved(i.Key) })
	if err != nil || len(keys) != 2 || keys[0].Key != "team/style.md" || keys[1].Key != "users/alice/a.md" {
		t.Errorf("the server's store holds %v (%v)", keys, err)
	}
}

// A token file's mounts are checked when it is read.
func TestTenantMountsRefused(t *testing.T) {
	for _, tc := range []struct{ mounts, want string }{
		{`[{"name": ".x"}]`, `mount name ".x" is not a single, unique, visible path segment`},
		{`[{"name": "a/b"}]`, `mount name "a/b" is not a single, unique, visible path segment`},
		{`[{"name": "a"}, {"name": "a", "prefix": "p"}]`, `mount name "a" is not a single, unique, visible path segment`},
		{`[{"name": "a", "prefix": "x/.cloudmem"}]`, `mount "a": prefix "x/.cloudmem" is not a valid store directory`},
		{`[{"name": "a", "prefix": "../x"}]`, `mount "a": prefix "../x" is not a valid store directory`},
		{`[{"name": "a", "store": "s3://x"}]`, `json: unknown field "store"`},
		{`[{"name": "team", "prefix": "team", "readonly": true}, {"name": "me", "prefix": "team/me"}]`,
			`mounts "team" and "me" overlap (prefixes "team" and "team/me"): a file under both would escape the limits and the read-only flag of one; give each its own directory`},
		{`[{"name": "a", "prefix": "x/"}, {"name": "b", "prefix": "x"}]`,
			`mounts "a" and "b" overlap (prefixes "x/" and "x"): a file under both would escape the limits and the read-only flag of one; give each its own directory`},
		{`[{"name": "all"}, {"name": "b", "prefix": "x"}]`,
			`mounts "all" and "b" overlap (prefixes "" and "x"): a file under both would escape the limits and the read-only flag of one; give each its own directory`},
	} {
		_, err := mcpserver.ParseTokens([]byte(`{"tenants": [{"name": "alice", "token": "alice-token-0123456789abcdef0123456789", "mounts": ` + tc.mounts + `}]}`))
		if err == nil || !errors.Is(err, mcpserver.ErrBadTokens) || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("mounts %s: err = %v, want ErrBadTokens ending in %q", tc.mounts, err, tc.want)
		}
	}
}

// Mounts whose prefixes share only the start of a name ("a" and "ab") do
// not overlap; prefixes that differ only in the case of their letters do,
// since a case-insensitive file system (macOS, Windows) keeps them in one
// directory, and so do prefixes written with a leading '/' (not a valid
// store directory) or a trailing one.
func TestTenantMountsOverlapEdges(t *testing.T) {
	for _, tc := range []struct{ mounts, want string }{
		{`[{"name": "a", "prefix": "a"}, {"name": "b", "prefix": "ab"}, {"name": "c", "prefix": "a.b"}, {"name": "d", "prefix": "b/a"}]`, ""},
		{`[{"name": "team", "prefix": "Team"}, {"name": "me", "prefix": "team/me"}]`,
			`mounts "team" and "me" overlap (prefixes "Team" and "team/me"): a file under both would escape the limits and the read-only flag of one; give each its own directory`},
		{`[{"name": "a", "prefix": "x"}, {"name": "b", "prefix": "X/"}]`,
			`mounts "a" and "b" overlap (prefixes "x" and "X/"): a file under both would escape the limits and the read-only flag of one; give each its own directory`},
		{`[{"name": "a", "prefix": "x"}, {"name": "b", "prefix": "/x"}]`, `mount "b": prefix "/x" is not a valid store directory`},
		{`[{"name": "a", "prefix": "x"}, {"name": "b", "prefix": "x//"}]`, `mount "b": prefix "x//" is not a valid store directory`},
	} {
		_, err := mcpserver.ParseTokens([]byte(`{"tenants": [{"name": "alice", "token": "alice-token-0123456789abcdef0123456789", "mounts": ` + tc.mounts + `}]}`))
		want := ""
		if tc.want != "" {
			want = `mcpserver: bad tokens: tenant 1 ("alice"): ` + tc.want
		}
		if got := fmt.Sprint(err); err == nil && want != "" || err != nil && got != want {
			t.Errorf("%s:\n got %v\nwant %s", tc.mounts, err, want)
		}
	}
}
