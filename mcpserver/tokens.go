package mcpserver

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/policy"
	"github.com/cloudmem/cloudmem/storeurl"
)

// MinTokenLen is the shortest bearer token a Tokens accepts, in bytes.
const MinTokenLen = 16

// ErrBadTokens is the error of a token file or token that Tokens refuses;
// the message names the tenant and what is wrong, never a token.
var ErrBadTokens = errors.New("mcpserver: bad tokens")

// A Tenant is who a bearer token belongs to, and what part of the store it
// sees. Tenants are isolated by construction: each has its own handler over
// its own view of the store, and its sessions cannot be used with another
// tenant's token.
type Tenant struct {
	// Name names the tenant in logs and as the actor of its commands
	// (blob.WithActor): letters, digits and . _ @ + -, at most 64.
	Name string `json:"name"`
	// Prefix is the part of the server's store the tenant sees: the keys
	// under this directory (blob.Prefix); "" is the whole store.
	Prefix string `json:"prefix,omitempty"`
	// ReadOnly refuses the tenant's writing commands.
	ReadOnly bool `json:"readonly,omitempty"`
	// Mounts, when set, gives the tenant one /memories that holds several
	// parts of its view of the store, each at /memories/NAME (package
	// mount): say the team's knowledge, read-only, beside the tenant's own
	// notes. A path outside them reaches nothing.
	Mounts []TenantMount `json:"mounts,omitempty"`
	// Policy and Secrets give the tenant write policies of its own
	// (docs/spec.md "Write policies"), as a store URL's policy= and
	// secrets= do: Policy names a policy file, Secrets a mode that
	// overrides the file's. They apply above the store's own and can make
	// it stricter, never looser: the secrets mode is the stricter of the
	// two, with the allow-list of the one whose mode holds, and the
	// tenant's expiry rules apply beside the store's. The file is read
	// once, when the token file is (ParseTokens, Tokens.Add).
	Policy  string `json:"policy,omitempty"`
	Secrets string `json:"secrets,omitempty"`
	// TreeLimits are the tenant's own limits, in place of the store's.
	TreeLimits

	policy *policy.Policy // Policy and Secrets, once read; nil: none
}

// TenantMount is one mount of a tenant: the keys under Prefix of the
// tenant's view of the store ("" for all of it), at /memories/Name, with
// write policies of its own as Tenant's Policy and Secrets give them
// (above the tenant's).
type TenantMount struct {
	Name     string `json:"name"`
	Prefix   string `json:"prefix,omitempty"`
	ReadOnly bool   `json:"readonly,omitempty"`
	Policy   string `json:"policy,omitempty"`
	Secrets  string `json:"secrets,omitempty"`
	// TreeLimits are the mount's own limits, in place of the tenant's
	// (its view_limit is not used: a view's limit is the table's).
	TreeLimits

	policy *policy.Policy // Policy and Secrets, once read; nil: none
}

// TreeLimits are limits of the memory tree (docs/spec.md "Concurrency,
// limits and failures") that a tenant or a mount sets in place of the
// server store's, with the values and the checks of the store URL
// parameters of the same names: a whole number, or "off" for MaxFiles and
// ViewLimit; "" sets nothing. In the token file each is a JSON number or
// string.
type TreeLimits struct {
	MaxFiles     LimitValue `json:"max_files,omitempty"`
	MaxFileBytes LimitValue `json:"max_file_bytes,omitempty"`
	ViewLimit    LimitValue `json:"view_limit,omitempty"`
}

// LimitValue is the value of one limit in TreeLimits, as a store URL
// writes it ("500", "off"); "" sets nothing.
type LimitValue string

// UnmarshalJSON takes a JSON string as its text and any other JSON value
// (a number, true, []) as its JSON text, and an empty string as `""`, so
// that TreeLimits.parse refuses every value a store URL would, naming the
// field, and only a field that is absent (or null) sets nothing.
func (v *LimitValue) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil || s == "" {
		s = string(data)
	}
	*v = LimitValue(s)
	return nil
}

// parse checks l as a store URL's parameters are checked and returns the
// limits it sets.
func (l TreeLimits) parse() (blob.Limits, error) {
	params := url.Values{}
	for name, v := range map[string]LimitValue{"max_files": l.MaxFiles, "max_file_bytes": l.MaxFileBytes, "view_limit": l.ViewLimit} {
		if v != "" {
			params.Set(name, string(v))
		}
	}
	return storeurl.ParseLimits(params)
}

// writePolicy returns the write policy of a policy file and a mode (either
// may be ""), or nil when both are empty.
func writePolicy(file, mode string) (*policy.Policy, error) {
	if file == "" && mode == "" {
		return nil, nil
	}
	p := &policy.Policy{}
	if file != "" {
		var err error
		if p, err = policy.Load(file); err != nil {
			return nil, err
		}
	}
	if mode != "" {
		m, err := policy.ParseMode(mode)
		if err != nil {
			return nil, err
		}
		p.Secrets = m
	}
	return p, nil
}

// loadTenant readies t once, when the tenant is added: it reads the write
// policies of t and of its mounts (t.policy, each mount's policy), so that
// a policy file is read once, and checks their limits (TreeLimits.parse),
// so that a bad value is refused with the token file. Its errors name the
// mount.
func loadTenant(t *Tenant) error {
	var err error
	if t.policy, err = writePolicy(t.Policy, t.Secrets); err != nil {
		return err
	}
	if _, err = t.TreeLimits.parse(); err != nil {
		return err
	}
	if len(t.Mounts) > 0 {
		t.Mounts = slices.Clone(t.Mounts)
	}
	for i := range t.Mounts {
		m := &t.Mounts[i]
		if m.policy, err = writePolicy(m.Policy, m.Secrets); err != nil {
			return fmt.Errorf("mount %q: %w", m.Name, err)
		}
		if _, err = m.TreeLimits.parse(); err != nil {
			return fmt.Errorf("mount %q: %w", m.Name, err)
		}
	}
	return nil
}

// policyOf returns the policy read into read, or, for a Tenant built
// without ParseTokens or Tokens.Add, the one file and mode give.
func policyOf(read *policy.Policy, file, mode string) (*policy.Policy, error) {
	if read != nil {
		return read, nil
	}
	return writePolicy(file, mode)
}

// withPolicy returns store under the write policy p (nil: store as it is):
// its secrets rules reported in the store's Traits for the memory handler,
// never looser than the store's own (the stricter mode holds, with its
// allow-list), and its expiry rules applied (storeurl.Expiring).
func withPolicy(store blob.Store, p *policy.Policy) blob.Store {
	if p == nil {
		return store
	}
	scan := p
	if base, _ := blob.TraitsOf(store).Policy.(*policy.Policy); base != nil && base.Secrets > p.Secrets {
		stricter := *p
		stricter.Secrets, stricter.Allow = base.Secrets, base.Allow
		scan = &stricter
	}
	return storeurl.Policed(store, scan) // scan keeps p's expiry rules
}

// tokenFile is the token file's format. Unknown fields are errors, so that
// a field added later (a tenant's own store URLs, say) is never silently
// ignored by an older server.
type tokenFile struct {
	Tenants []struct {
		Tenant
		// Token is the bearer token itself, or TokenSHA256 the hex SHA-256
		// of it (so that the file holds no secret); exactly one is set.
		Token       string `json:"token,omitempty"`
		TokenSHA256 string `json:"token_sha256,omitempty"`
	} `json:"tenants"`
}

// Tokens maps bearer tokens to tenants. It keeps only the SHA-256 of each
// token, and Lookup compares a presented token's hash with every entry in
// constant time. The zero value holds no token; a Tokens is safe for
// concurrent Lookup once filled.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	sum    [sha256.Size]byte
	tenant *Tenant
}

var tenantName = regexp.MustCompile(`^[A-Za-z0-9._@+-]{1,64}$`)

// ParseTokens reads a token file:
//
//	{"tenants": [
//	  {"name": "alice", "token_sha256": "<hex SHA-256 of alice's token>", "prefix": "alice"},
//	  {"name": "bob", "token": "<bob's token>", "prefix": "bob", "max_files": 500},
//	  {"name": "auditor", "token_sha256": "...", "readonly": true}
//	]}
//
// Names and tokens must be unique. Errors wrap ErrBadTokens.
func ParseTokens(data []byte) (*Tokens, error) {
	var f tokenFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%w: the token file is not valid: %w", ErrBadTokens, err)
	}
	ts := &Tokens{}
	for i, e := range f.Tenants {
		var sum [sha256.Size]byte
		switch {
		case e.Token != "" && e.TokenSHA256 != "":
			return nil, fmt.Errorf("%w: tenant %d (%q) has both token and token_sha256", ErrBadTokens, i+1, e.Name)
		case e.Token != "":
			if len(e.Token) < MinTokenLen {
				return nil, fmt.Errorf("%w: tenant %d (%q): the token is shorter than %d bytes", ErrBadTokens, i+1, e.Name, MinTokenLen)
			}
			sum = sha256.Sum256([]byte(e.Token))
		default:
			b, err := hex.DecodeString(e.TokenSHA256)
			if err != nil || len(b) != sha256.Size {
				return nil, fmt.Errorf("%w: tenant %d (%q): token_sha256 must be 64 hex digits", ErrBadTokens, i+1, e.Name)
			}
			copy(sum[:], b)
		}
		if err := ts.add(sum, e.Tenant); err != nil {
			return nil, fmt.Errorf("%w: tenant %d (%q): %w", ErrBadTokens, i+1, e.Name, err)
		}
	}
	return ts, nil
}

// Add adds a tenant with the bearer token token (at least MinTokenLen
// bytes), for a token given in the environment. Errors wrap ErrBadTokens.
func (ts *Tokens) Add(token string, t Tenant) error {
	if len(token) < MinTokenLen {
		return fmt.Errorf("%w: the token of %q is shorter than %d bytes", ErrBadTokens, t.Name, MinTokenLen)
	}
	if err := ts.add(sha256.Sum256([]byte(token)), t); err != nil {
		return fmt.Errorf("%w: tenant %q: %w", ErrBadTokens, t.Name, err)
	}
	return nil
}

// add adds a tenant; its errors say what is wrong with t, and the caller
// names t.
func (ts *Tokens) add(sum [sha256.Size]byte, t Tenant) error {
	if err := checkTenant(t); err != nil {
		return err
	}
	if err := loadTenant(&t); err != nil {
		return err
	}
	for _, e := range ts.entries {
		if e.tenant.Name == t.Name {
			return errors.New("the name appears twice")
		}
		if e.sum == sum {
			return fmt.Errorf("the same token as %q", e.tenant.Name)
		}
	}
	ts.entries = append(ts.entries, tokenEntry{sum: sum, tenant: &t})
	return nil
}

// decodeStrict decodes one JSON value, refusing unknown fields, so that a
// field added later (a tenant's own store URLs, say) is never silently
// ignored by an older server.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// checkTenant checks a tenant's name, prefix and mounts; its errors say what
// is wrong with t, and the caller names t.
func checkTenant(t Tenant) error {
	if !tenantName.MatchString(t.Name) {
		return errors.New("a name has 1 to 64 letters, digits and . _ @ + -")
	}
	if t.Prefix != "" {
		if err := blob.CheckPrefix(t.Prefix); err != nil || blob.IsReserved(t.Prefix) {
			return fmt.Errorf("prefix %q is not a valid store directory", t.Prefix)
		}
	}
	mounted := map[string]bool{}
	for _, m := range t.Mounts { // the rest of the table's rules: mount.New
		if err := mount.CheckName(m.Name); err != nil || mounted[m.Name] {
			return fmt.Errorf("mount name %q is not a single, unique, visible path segment", m.Name)
		}
		mounted[m.Name] = true
		if m.Prefix != "" && (blob.CheckPrefix(m.Prefix) != nil || blob.IsReserved(m.Prefix)) {
			return fmt.Errorf("mount %q: prefix %q is not a valid store directory", m.Name, m.Prefix)
		}
	}
	for i, a := range t.Mounts {
		for _, b := range t.Mounts[i+1:] {
			if nested(a.Prefix, b.Prefix) || nested(b.Prefix, a.Prefix) {
				return fmt.Errorf("mounts %q and %q overlap (prefixes %q and %q): a file under both would escape the limits and the read-only flag of one; give each its own directory",
					a.Name, b.Name, a.Prefix, b.Prefix)
			}
		}
	}
	return nil
}

// nested reports whether the directory inner ("" is the whole store) is
// the directory outer or lies beneath it, in any case of their letters: a
// case-insensitive file system keeps "Team" and "team" in one directory.
func nested(outer, inner string) bool {
	outer, inner = strings.ToLower(strings.Trim(outer, "/")), strings.ToLower(strings.Trim(inner, "/"))
	return outer == "" || inner == outer || strings.HasPrefix(inner, outer+"/")
}

// Len reports how many tokens ts holds.
func (ts *Tokens) Len() int {
	if ts == nil {
		return 0
	}
	return len(ts.entries)
}

// Lookup returns the tenant of token. It hashes token and compares the hash
// with every entry's in constant time, so its time says nothing about how
// close a wrong token came, nor which entry matched.
func (ts *Tokens) Lookup(token string) (*Tenant, bool) {
	if ts == nil {
		return nil, false
	}
	sum := sha256.Sum256([]byte(token))
	var found *Tenant
	for _, e := range ts.entries {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			found = e.tenant
		}
	}
	return found, found != nil
}
