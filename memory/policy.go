package memory

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/policy"
)

// ErrSecret: the write policy refused a text that holds a secret (mode
// reject); nothing was written.
var ErrSecret = errors.New("memory: the text holds a secret")

// SecretObserver is an Observer that is also told of each secret a write
// policy finds (package telemetry's counts them by rule and mode). The
// Handler calls SecretFound under the command's context, once per finding,
// before it writes; it never passes the secret.
type SecretObserver interface {
	SecretFound(ctx context.Context, rule string, mode policy.Mode)
}

// policies are a Handler's write policies, resolved at New: Options.Policy
// wins; else, on a mount table, each mount's (blob.MountPoint.Policy); else
// the store's (blob.Traits.Policy, a URL's secrets= and policy=).
type policies struct {
	store  *policy.Policy // Options.Policy, else the store's; nil: none
	set    bool           // Options.Policy was set: it holds in every mount
	active bool           // some policy scans: without one, writes cost nothing more
}

// newPolicies resolves the policies of a Handler over store with set, the
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
func (h *Handler) policyAt(key string) *policy.Policy {
	if !h.policies.set {
		if m, ok := blob.MountOf(blob.Mounts(h.store), key); ok {
			p, _ := m.Policy.(*policy.Policy)
			return p
		}
	}
	return h.policies.store
}

// screen applies the write policy of key to data, the whole content a
// command is about to write there, once that content is final. It returns
// the context to write under (ctx, or ctx carrying what the policy did, for
// history: blob.WithPolicyAction), the content to write (data, or data with
// its secrets redacted) and the note for the success text (empty unless
// redacted), or ok == false and the refusal. A text over the size limit is
// left to the size check: it is refused for its size, unscanned.
func (h *Handler) screen(ctx context.Context, c *command, key string, data []byte) (wctx context.Context, out []byte, note string, res Result, ok bool) {
	if !h.policies.active {
		return ctx, data, "", Result{}, true
	}
	p, path := h.policyAt(key), pathOf(key)
	if !p.Scans(path) || int64(len(data)) > h.maxFileBytesAt(key) {
		return ctx, data, "", Result{}, true
	}
	found, err := p.Scan(path, data)
	if err != nil {
		return ctx, nil, "", h.storageFailure(ctx, c, c.path, err), false
	}
	if len(found) == 0 {
		return ctx, data, "", Result{}, true
	}
	h.reportSecrets(ctx, c, c.path, p, found)
	switch p.Secrets {
	case policy.Reject:
		return ctx, nil, "", errorResult(ErrSecret, msgSecretRefused(c.path, found)), false
	case policy.Redact:
		ctx = blob.WithPolicyAction(ctx, policyAction("secrets redacted: ", found))
		return ctx, policy.Redacted(data, found), msgSecretsRedacted(found), Result{}, true
	}
	ctx = blob.WithPolicyAction(ctx, policyAction("secrets kept (warn): ", found))
	return ctx, data, "", Result{}, true // policy.Warn
}

// policyAction is what history records of a write whose content held the
// secrets found: head, then "{rule} on line {line}" for each (as listed in
// the texts), never the secret.
func policyAction(head string, found []policy.Finding) string {
	var b strings.Builder
	b.WriteString(head)
	listFindings(&b, found, false)
	return b.String()
}

// reportSecrets logs and counts the secrets found in what a command writes
// to path (never the secrets themselves).
func (h *Handler) reportSecrets(ctx context.Context, c *command, path string, p *policy.Policy, found []policy.Finding) {
	so, _ := h.obs.(SecretObserver)
	for _, f := range found {
		h.log.LogAttrs(ctx, slog.LevelWarn, "memory: a write holds a secret", slog.String("command", c.name),
			slog.String("path", path), slog.String("rule", f.Rule), slog.Int("line", f.Line),
			slog.String("mode", p.Secrets.String()))
		if so != nil {
			so.SecretFound(ctx, f.Rule, p.Secrets)
		}
	}
}

// screenMove applies the write policies to a rename of oldKey to newKey,
// before anything moves: each file it moves whose new path a policy scans,
// unless the same policy scanned it at its old path (an allow-listed path,
// or a mount of another policy, does not), is read and scanned as a write
// of its content to its new path would be. Under reject and redact a secret
// refuses the whole rename (a rename does not rewrite a file, so it cannot
// redact); under warn it is logged and counted, and the file moves. A file
// over the file size limit, or gone meanwhile, is left to the move.
func (h *Handler) screenMove(ctx context.Context, c *command, oldKey, newKey string) (Result, bool) {
	if !h.policies.active {
		return Result{}, true
	}
	var keys []string
	_, err := h.store.Stat(ctx, oldKey)
	switch {
	case err == nil:
		keys = []string{oldKey}
	case !errors.Is(err, blob.ErrNotExist):
		return h.storageFailure(ctx, c, c.oldPath, err), false
	default:
		for info, err := range h.store.List(ctx, oldKey+"/") {
			if err != nil {
				return h.storageFailure(ctx, c, c.oldPath, err), false
			}
			if !isBookkeeping(info.Key) {
				keys = append(keys, info.Key)
			}
		}
	}
	for _, key := range keys {
		dst := newKey + key[len(oldKey):]
		pNew, pOld := h.policyAt(dst), h.policyAt(key)
		if !pNew.Scans(pathOf(dst)) || pOld == pNew && pOld.Scans(pathOf(key)) {
			continue
		}
		data, _, err := h.store.Get(ctx, key, h.readLimit(key))
		switch {
		case errors.Is(err, blob.ErrNotExist) || errors.Is(err, blob.ErrTooLarge):
			continue
		case err != nil:
			return h.storageFailure(ctx, c, c.oldPath, err), false
		case int64(len(data)) > h.maxFileBytesAt(dst):
			continue
		}
		found, err := pNew.Scan(pathOf(dst), data)
		if err != nil {
			return h.storageFailure(ctx, c, c.oldPath, err), false
		}
		if len(found) == 0 {
			continue
		}
		h.reportSecrets(ctx, c, pathOf(dst), pNew, found)
		if pNew.Secrets == policy.Reject || pNew.Secrets == policy.Redact {
			return errorResult(ErrSecret, msgSecretNotMoved(c.oldPath, c.newPath, pathOf(dst), found)), false
		}
	}
	return Result{}, true
}

// msgSecretNotMoved is the text of a rename refused because it would move
// a secret into dest, the new path of a file it moves.
func msgSecretNotMoved(oldPath, newPath, dest string, fs []policy.Finding) string {
	var b strings.Builder
	b.WriteString("Moving " + oldPath + " to " + newPath + " would put ")
	if len(fs) == 1 {
		b.WriteString("a secret into " + dest + " (")
	} else {
		b.WriteString(strconv.Itoa(len(fs)) + " secrets into " + dest + " (")
	}
	listFindings(&b, fs, false)
	b.WriteString("); nothing was moved. " + secretsAdvice)
	return b.String()
}

// withNote returns res with note on a line of its own after its text, when
// res is a success and note is not empty.
func withNote(res Result, note string) Result {
	if note != "" && !res.IsError {
		res.Text += "\n" + note
	}
	return res
}

// screenEdit is screen for str_replace and insert: content is the file as
// read, updated the new content and done its success text. When secrets
// were redacted, str_replace's snippet shows the content as written, from
// 2 lines before its first changed line to 2 lines after its last.
func (h *Handler) screenEdit(ctx context.Context, c *command, key string, content, updated []byte, done string) (context.Context, []byte, string, Result, bool) {
	ctx, out, note, res, ok := h.screen(ctx, c, key, updated)
	if !ok || note == "" {
		return ctx, out, done, res, ok
	}
	if c.name == "str_replace" {
		first, last := changedLines(content, out)
		var b strings.Builder
		b.WriteString(snippetHeader)
		writeNumbered(&b, out, max(first-2, 1), min(last+2, countLines(out)), -1)
		done = b.String()
	}
	return ctx, out, done + "\n" + note, res, ok
}

// changedLines returns the 1-based numbers of the first and last lines of
// updated that differ from old: the lines between their common prefix and
// their common suffix.
func changedLines(old, updated []byte) (first, last int) {
	p := 0
	for p < len(old) && p < len(updated) && old[p] == updated[p] {
		p++
	}
	s := 0
	for s < len(old)-p && s < len(updated)-p && old[len(old)-1-s] == updated[len(updated)-1-s] {
		s++
	}
	first = 1 + bytes.Count(updated[:p], []byte{'\n'})
	end := len(updated) - s
	last = 1 + bytes.Count(updated[:end], []byte{'\n'})
	if end > p && updated[end-1] == '\n' {
		last-- // the change ends with a whole line
	}
	return first, max(first, last)
}

// maxSecretsListed is how many findings a policy text lists.
const maxSecretsListed = 10

// msgSecretRefused is the text of a write that reject refused.
func msgSecretRefused(path string, fs []policy.Finding) string {
	var b strings.Builder
	b.WriteString("The content for " + path + " holds ")
	if len(fs) == 1 {
		b.WriteString("a secret (")
	} else {
		b.WriteString(strconv.Itoa(len(fs)) + " secrets (")
	}
	listFindings(&b, fs, false)
	b.WriteString("); nothing was written. " + secretsAdvice)
	return b.String()
}

// msgSecretsRedacted is the note redact adds to a success text.
func msgSecretsRedacted(fs []policy.Finding) string {
	var b strings.Builder
	if len(fs) == 1 {
		b.WriteString("Note: a secret was replaced by ")
	} else {
		b.WriteString("Note: " + strconv.Itoa(len(fs)) + " secrets were replaced: ")
	}
	listFindings(&b, fs, true)
	b.WriteString(". " + secretsAdvice)
	return b.String()
}

const secretsAdvice = "Memory files keep no secrets: write where a secret is kept " +
	"(a vault path, an environment variable's name) instead of the secret itself."

// listFindings writes "{rule} on line {line}" (placeholder: the rule's
// placeholder instead of the rule) for the first maxSecretsListed findings,
// joined by ", ", then ", … ({n} in all)" when there are more.
func listFindings(b *strings.Builder, fs []policy.Finding, placeholder bool) {
	for i, f := range fs[:min(len(fs), maxSecretsListed)] {
		if i > 0 {
			b.WriteString(", ")
		}
		if placeholder {
			b.WriteString(policy.Placeholder(f.Rule))
		} else {
			b.WriteString(f.Rule)
		}
		b.WriteString(" on line " + strconv.Itoa(f.Line))
	}
	if len(fs) > maxSecretsListed {
		b.WriteString(", … (" + strconv.Itoa(len(fs)) + " in all)")
	}
}
