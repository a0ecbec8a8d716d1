package web

import (
	"testing"

	"github.com/cloudmem/cloudmem/mcpserver"
)

func TestKeys(t *testing.T) {
	alice := &mcpserver.Tenant{Name: "alice", Prefix: "alice"}
	carol := &mcpserver.Tenant{Name: "carol", Prefix: "team", Mounts: []mcpserver.TenantMount{
		{Name: "mine", Prefix: "carol"}, {Name: "shared", Prefix: "shared", ReadOnly: true}, {Name: "all"}}}
	for _, c := range []struct {
		t        *mcpserver.Tenant
		key      string
		skey     string
		readOnly bool
		ok       bool
	}{
		{nil, "a.md", "a.md", false, true},
		{alice, "notes/a.md", "alice/notes/a.md", false, true},
		{carol, "mine/a.md", "team/carol/a.md", false, true},
		{carol, "shared/x/b.md", "team/shared/x/b.md", true, true},
		{carol, "all/c.md", "team/c.md", false, true},
		{carol, "other/c.md", "", false, false},
		{carol, "mine", "", false, false},
	} {
		skey, ro, ok := storeKey(c.t, c.key)
		if skey != c.skey || ro != c.readOnly || ok != c.ok {
			t.Errorf("storeKey(%v, %q) = %q, %v, %v; want %q, %v, %v", c.t, c.key, skey, ro, ok, c.skey, c.readOnly, c.ok)
		}
		if !ok {
			continue
		}
		if back, ok := tenantKey(c.t, skey); !ok || back != c.key {
			t.Errorf("tenantKey(%v, %q) = %q, %v; want %q", c.t, skey, back, ok, c.key)
		}
	}
	for _, c := range []struct {
		t    *mcpserver.Tenant
		skey string
	}{{alice, "bob/a.md"}, {alice, "alice"}, {alice, "alicea/b.md"}, {carol, "elsewhere/a.md"}} {
		if k, ok := tenantKey(c.t, c.skey); ok {
			t.Errorf("tenantKey(%v, %q) = %q, true; want not seen", c.t, c.skey, k)
		}
	}
}
