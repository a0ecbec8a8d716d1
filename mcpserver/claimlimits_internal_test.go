package mcpserver

import (
	"errors"
	"testing"
)

// The OAuth tenant file checks a tenant's and a mount's limits as the token
// file does, the "*" tenant's included, when it is read; and the "*"
// tenant's mounts, whose prefixes name the claim, cannot overlap for any
// claim: a value that would make two of them one directory (or one beneath
// the other) is refused at lookup, as a value that is not a valid name is.
func TestClaimTenantLimitsAndOverlap(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{`{"tenants": [{"claim": "*", "prefix": "users/{claim}", "max_files": 0}]}`,
			`mcpserver: bad tokens: tenant 1 ("*"): storeurl: max_files="0": want a whole number from 1 to 1000000000, or off`},
		{`{"tenants": [{"claim": "c1", "name": "a", "mounts": [{"name": "m", "prefix": "m", "max_file_bytes": "off"}]}]}`,
			`mcpserver: bad tokens: tenant 1 ("a"): mount "m": storeurl: max_file_bytes="off": want a whole number from 1 to 1073741824`},
		{`{"tenants": [{"claim": "*", "mounts": [{"name": "me", "prefix": "{claim}"}, {"name": "notes", "prefix": "{claim}/notes"}]}]}`,
			`mcpserver: bad tokens: tenant 1 ("*"): mounts "me" and "notes" overlap (prefixes "any" and "any/notes"): a file under both would escape the limits and the read-only flag of one; give each its own directory`},
	} {
		_, err := ParseClaimTenants([]byte(tc.file))
		if err == nil || err.Error() != tc.want || !errors.Is(err, ErrBadTokens) {
			t.Errorf("%s:\n got %v\nwant %s", tc.file, err, tc.want)
		}
	}

	ct, err := ParseClaimTenants([]byte(`{"tenants": [{"claim": "*", "max_files": 3, "view_limit": null, "mounts": [
		{"name": "me", "prefix": "users/{claim}", "max_file_bytes": 100}, {"name": "team", "prefix": "users/team", "readonly": true}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if tenant, ok := ct.lookup("team"); ok {
		t.Errorf("claim team: its mount me is users/team, the read-only mount team: %+v", tenant)
	}
	tenant, ok := ct.lookup("alice")
	if !ok {
		t.Fatal("claim alice refused")
	}
	l, err := tenant.TreeLimits.parse()
	if err != nil || l.MaxFiles != 3 || l.ViewLimit != 0 || tenant.Mounts[0].Prefix != "users/alice" || tenant.Mounts[0].MaxFileBytes != "100" {
		t.Errorf("claim alice: %+v, limits %+v, %v", tenant, l, err)
	}
}
