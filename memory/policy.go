package memory

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"

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
	b.WriteString(policy.List(fs, false))
	b.WriteString("); nothing was moved. " + secretsAdvice)
	return b.String()
}

// withNote returns res with the note on the secrets redacted, when there
// are any, on a line of its own after its text.
func withNote(res Result, redacted []policy.Finding) Result {
	if len(redacted) > 0 {
		res.Text += "\n" + msgSecretsRedacted(redacted)
	}
	return res
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

// msgSecretRefused is the text of a write that reject refused.
func msgSecretRefused(path string, fs []policy.Finding) string {
	var b strings.Builder
	b.WriteString("The content for " + path + " holds ")
	if len(fs) == 1 {
		b.WriteString("a secret (")
	} else {
		b.WriteString(strconv.Itoa(len(fs)) + " secrets (")
	}
	b.WriteString(policy.List(fs, false))
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
	b.WriteString(policy.List(fs, true))
	b.WriteString(". " + secretsAdvice)
	return b.String()
}

const secretsAdvice = "Memory files keep no secrets: write where a secret is kept " +
	"(a vault path, an environment variable's name) instead of the secret itself."
