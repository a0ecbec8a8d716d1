package mcpserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudmem/cloudmem/policy"
)

// The "*" tenant's policy file is read once, with the tenant file: a
// lookup (one per OAuth request) reads nothing, so a file moved afterwards
// refuses no one, and every claim's tenant carries the policy read.
func TestClaimPolicyReadOnce(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(pol, []byte("secrets: reject\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ct, err := ParseClaimTenants([]byte(`{"tenants": [{"claim": "*", "prefix": "users/{claim}", "policy": "` + pol + `"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pol); err != nil {
		t.Fatal(err)
	}
	tenant, ok := ct.lookup("alice")
	if !ok {
		t.Fatal("alice refused once the policy file, read at load, is gone")
	}
	if tenant.policy == nil || tenant.policy.Secrets != policy.Reject || tenant.Prefix != "users/alice" {
		t.Fatalf("alice's tenant: %+v, policy %+v", tenant, tenant.policy)
	}
}
