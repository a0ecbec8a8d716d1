package gate

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/policy"
)

// policies are a Tree's write policies, resolved at New: Options.Policy
// wins; else, on a mount table, each mount's (blob.MountPoint.Policy); else
// the store's (blob.Traits.Policy, a URL's secrets= and policy=).
type policies struct {
	store  *policy.Policy // Options.Policy, else the store's; nil: none
	set    bool           // Options.Policy was set: it holds in every mount
	active bool           // some policy scans: without one, writes cost nothing more
}

// newPolicies resolves the policies of a Tree over store with set, the
// Options' policy (nil: none set).
func newPolicies(store blob.Store, set *policy.Policy) policies {
	t := blob.TraitsOf(store)
	if set != nil {
		return policies{store: set, set: true, active: set.Secrets != policy.Off}
	}
	p, _ := t.Policy.(*policy.Policy)
	ps := policies{store: p, active: p != nil && p.Secrets != policy.Off}
	for _, m := range t.Mounts {
		if mp, _ := m.Policy.(*policy.Policy); mp != nil && mp.Secrets != policy.Off {
			ps.active = true
		}
	}
	return ps
}

// policyAt returns the write policy of the scope that holds key.
func (g *Tree) policyAt(key string) *policy.Policy {
	if !g.policies.set {
		if m, ok := blob.MountOf(blob.Mounts(g.store), key); ok {
			p, _ := m.Policy.(*policy.Policy)
			return p
		}
	}
	return g.policies.store
}

// screen applies the write policy of key to data, the whole content a
// write is about to put there, once that content is final. It returns the
// context to write under (ctx, or ctx carrying what the policy did, for
// history: blob.WithPolicyAction), the content to write (data, or data
// with its secrets redacted) and the secrets redacted, or the ErrSecret
// refusal. A text over the size limit is left to the size check: it is
// refused for its size, unscanned.
func (g *Tree) screen(ctx context.Context, key string, data []byte) (wctx context.Context, out []byte, redacted []policy.Finding, err error) {
	if !g.policies.active {
		return ctx, data, nil, nil
	}
	p, path := g.policyAt(key), PathOf(key)
	if !p.Scans(path) || int64(len(data)) > g.maxFileBytesAt(key) {
		return ctx, data, nil, nil
	}
	found, err := p.Scan(path, data)
	if err != nil || len(found) == 0 {
		return ctx, data, nil, err
	}
	g.reportSecrets(ctx, key, p, found)
	switch p.Secrets {
	case policy.Reject:
		return ctx, nil, nil, &Error{Kind: ErrSecret, Key: key, Secrets: found}
	case policy.Redact:
		ctx = blob.WithPolicyAction(ctx, "secrets redacted: "+policy.List(found, false))
		return ctx, policy.Redacted(data, found), found, nil
	}
	ctx = blob.WithPolicyAction(ctx, "secrets kept (warn): "+policy.List(found, false))
	return ctx, data, nil, nil // policy.Warn
}

// reportSecrets logs and counts the secrets found in what a write puts at
// key (never the secrets themselves).
func (g *Tree) reportSecrets(ctx context.Context, key string, p *policy.Policy, found []policy.Finding) {
	for _, f := range found {
		g.log.LogAttrs(ctx, slog.LevelWarn, "gate: a write holds a secret",
			slog.String("path", PathOf(key)), slog.String("rule", f.Rule), slog.Int("line", f.Line),
			slog.String("mode", p.Secrets.String()))
		if g.secretFound != nil {
			g.secretFound(ctx, f.Rule, p.Secrets)
		}
	}
}

// screenMove applies the write policies to a move of oldKey to newKey,
// before anything moves: each file it moves whose new path a policy scans,
// unless the same policy scanned it at its old path (an allow-listed path,
// or a mount of another policy, does not), is read and scanned as a write
// of its content to its new path would be. Under reject and redact a secret
// refuses the whole move (ErrSecret about the file's new key: a move does
// not rewrite a file, so it cannot redact); under warn it is logged and
// counted, and the file moves. A file over the file size limit, or gone
// meanwhile, is left to the move.
func (g *Tree) screenMove(ctx context.Context, oldKey, newKey string) error {
	if !g.policies.active {
		return nil
	}
	var keys []string
	_, err := g.store.Stat(ctx, oldKey)
	switch {
	case err == nil:
		keys = []string{oldKey}
	case !errors.Is(err, blob.ErrNotExist):
		return err
	default:
		for info, err := range g.List(ctx, oldKey+"/") {
			if err != nil {
				return err
			}
			keys = append(keys, info.Key)
		}
	}
	for _, key := range keys {
		dst := newKey + key[len(oldKey):]
		pNew, pOld := g.policyAt(dst), g.policyAt(key)
		if !pNew.Scans(PathOf(dst)) || pOld == pNew && pOld.Scans(PathOf(key)) {
			continue
		}
		data, _, err := g.store.Get(ctx, key, g.readLimit(key))
		switch {
		case errors.Is(err, blob.ErrNotExist) || errors.Is(err, blob.ErrTooLarge):
			continue
		case err != nil:
			return err
		case int64(len(data)) > g.maxFileBytesAt(dst):
			continue
		}
		found, err := pNew.Scan(PathOf(dst), data)
		if err != nil {
			return err
		}
		if len(found) == 0 {
			continue
		}
		g.reportSecrets(ctx, dst, pNew, found)
		if pNew.Secrets == policy.Reject || pNew.Secrets == policy.Redact {
			return &Error{Kind: ErrSecret, Key: dst, Secrets: found}
		}
	}
	return nil
}
