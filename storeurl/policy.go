package storeurl

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/policy"
)

// OrderPolicy carries the memory tree's write policy (secrets=, policy=;
// registered by this package) in the store's Traits (blob.WithPolicy), and
// applies its expiry rules (blob.WithExpiry, see Expiring): between the
// read-only layer and the limits, which report its Traits. Being above
// history, its deletions of expired files are recorded, as policy:expire.
const OrderPolicy = 450

// The write policy's parameters (docs/spec.md "Write policies").
const (
	paramSecrets = "secrets" // a mode: off, warn, redact or reject
	paramPolicy  = "policy"  // a policy file (YAML)
)

var policyLayer = Wrapper{Order: OrderPolicy, Params: []string{paramSecrets, paramPolicy},
	Check: func(params url.Values) error { _, err := policyOf(params); return err },
	Wrap: func(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
		p, err := policyOf(params)
		if err != nil {
			return nil, err
		}
		return Policed(s, p), nil
	}}

// Policed returns s under the write policy p, as a URL's secrets= and
// policy= put it: p reported in the store's Traits (blob.WithPolicy), for
// the memory handler's secrets rules, and p's expiry rules applied beneath
// (Expiring). A program that places a policy itself (an MCP tenant's own
// policy) places it with this.
func Policed(s blob.Store, p *policy.Policy) blob.Store {
	return blob.WithPolicy(Expiring(s, p, nil), p)
}

// Expiring returns s with the expiry rules of p applied (blob.WithExpiry):
// a key k of s is the path /memories/k of p's rules. now is the clock (nil:
// time.Now). Without rules it returns s.
func Expiring(s blob.Store, p *policy.Policy, now func() time.Time) blob.Store {
	if p == nil || len(p.Expire) == 0 {
		return s
	}
	return blob.WithExpiry(s, blob.Expiry{Now: now,
		After: func(key string) (time.Duration, bool) { return p.ExpiresAfter("/memories/" + key) }})
}

func init() { RegisterWrapper("policy", policyLayer) }

// policyOf returns the policy the parameters give: the policy file's, if
// policy= names one, with the mode secrets= gives, if it does.
func policyOf(params url.Values) (*policy.Policy, error) {
	p := &policy.Policy{}
	if name, ok := params[paramPolicy]; ok {
		if name[0] == "" {
			return nil, fmt.Errorf("storeurl: policy is empty (leave it out for no policy file)")
		}
		var err error
		if p, err = policy.Load(name[0]); err != nil {
			return nil, fmt.Errorf("storeurl: %w", err)
		}
	}
	if mode, ok := params[paramSecrets]; ok {
		m, err := policy.ParseMode(mode[0])
		if err != nil {
			return nil, fmt.Errorf("storeurl: %w", err)
		}
		p.Secrets = m
	}
	return p, nil
}
