package memorytest

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/policy"
)

// Write policies: docs/spec.md "Write policies". The secrets are made up;
// each is one that gitleaks' default rules find.
const (
	awsKey    = "AKIAZ3MSJV4WWNKWW5FG"
	slackKey  = "xoxb-123456789012-1234567890123-abcdefghijABCDEFGHIJklmn"
	secretAdv = " Memory files keep no secrets: write where a secret is kept (a vault path, an environment variable's name) instead of the secret itself."
)

// refused is reject's text for path and its findings ("rule on line n").
func refused(path string, findings ...string) string {
	what := "a secret"
	if len(findings) > 1 {
		what = strconv.Itoa(len(findings)) + " secrets"
	}
	return "The content for " + path + " holds " + what + " (" + strings.Join(findings, ", ") + "); nothing was written." + secretAdv
}

// redacted is redact's note for its findings ("[REDACTED:rule] on line n").
func redacted(findings ...string) string {
	if len(findings) == 1 {
		return "\nNote: a secret was replaced by " + findings[0] + "." + secretAdv
	}
	return "\nNote: " + strconv.Itoa(len(findings)) + " secrets were replaced: " + strings.Join(findings, ", ") + "." + secretAdv
}

func secrets(mode policy.Mode) memory.Options {
	return memory.Options{Policy: &policy.Policy{Secrets: mode}}
}

func policyCases() []Case {
	note := "notes\naws " + awsKey + " here\nend\n"
	two := awsKey + "\nmid\n" + slackKey + "\n"
	reject, redact, warn := secrets(policy.Reject), secrets(policy.Redact), secrets(policy.Warn)
	allowRegex := memory.Options{Policy: &policy.Policy{Secrets: policy.Reject,
		Allow: policy.Allow{Regexes: []*regexp.Regexp{regexp.MustCompile("^AKIAZ3MS")}}}}
	allowPath := memory.Options{Policy: &policy.Policy{Secrets: policy.Reject, Allow: policy.Allow{Paths: []string{"/memories/fixtures/**"}}}}
	var many strings.Builder
	var listed, placeholders []string
	for i := range 12 {
		many.WriteString("k " + awsKey + "\n")
		if i < 10 {
			listed = append(listed, "aws-access-token on line "+strconv.Itoa(i+1))
			placeholders = append(placeholders, "[REDACTED:aws-access-token] on line "+strconv.Itoa(i+1))
		}
	}
	listed[9] += ", … (12 in all)"
	placeholders[9] += ", … (12 in all)"
	const eight = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8"
	start := files("/memories/f.md", eight)
	return []Case{
		// create, in each mode.
		{Name: "create, reject", Options: reject, Input: createInput("/memories/k.md", note),
			Want: fail(refused("/memories/k.md", "aws-access-token on line 2"))},
		{Name: "create, reject, the path as sent", Options: reject, Input: createInput("/memories//k.md", note),
			Want: fail(refused("/memories//k.md", "aws-access-token on line 2"))},
		{Name: "create, reject, two secrets", Options: reject, Input: createInput("/memories/k.md", two),
			Want: fail(refused("/memories/k.md", "aws-access-token on line 1", "slack-bot-token on line 3"))},
		{Name: "create, reject, the list ends after 10", Options: reject, Input: createInput("/memories/k.md", many.String()),
			Want: fail("The content for /memories/k.md holds 12 secrets (" + strings.Join(listed, ", ") + "); nothing was written." + secretAdv)},
		{Name: "create, reject before exists", Options: reject, Files: files("/memories/k.md", "old"), Input: createInput("/memories/k.md", note),
			Want: fail(refused("/memories/k.md", "aws-access-token on line 2"))},
		{Name: "create, reject, no secret", Options: reject, Input: createInput("/memories/k.md", "notes\n"), Want: ok(created("/memories/k.md")),
			WantFiles: files("/memories/k.md", "notes\n")},
		{Name: "create, reject, over the size limit: refused for its size", Options: memory.Options{MaxFileBytes: 10, Policy: reject.Policy},
			Input: createInput("/memories/k.md", note), Want: fail(tooBig("/memories/k.md", len(note), 10))},
		{Name: "create, redact", Options: redact, Input: createInput("/memories/k.md", note),
			Want:      ok(created("/memories/k.md") + redacted("[REDACTED:aws-access-token] on line 2")),
			WantFiles: files("/memories/k.md", "notes\naws [REDACTED:aws-access-token] here\nend\n")},
		{Name: "create, redact, two secrets", Options: redact, Input: createInput("/memories/k.md", two),
			Want:      ok(created("/memories/k.md") + redacted("[REDACTED:aws-access-token] on line 1", "[REDACTED:slack-bot-token] on line 3")),
			WantFiles: files("/memories/k.md", "[REDACTED:aws-access-token]\nmid\n[REDACTED:slack-bot-token]\n")},
		{Name: "create, redact, the list ends after 10", Options: redact, Input: createInput("/memories/k.md", many.String()),
			Want:      ok(created("/memories/k.md") + "\nNote: 12 secrets were replaced: " + strings.Join(placeholders, ", ") + "." + secretAdv),
			WantFiles: files("/memories/k.md", strings.Repeat("k [REDACTED:aws-access-token]\n", 12))},
		{Name: "create, warn", Options: warn, Input: createInput("/memories/k.md", note), Want: ok(created("/memories/k.md")),
			WantFiles: files("/memories/k.md", note)},
		{Name: "create, off", Options: secrets(policy.Off), Input: createInput("/memories/k.md", note), Want: ok(created("/memories/k.md")),
			WantFiles: files("/memories/k.md", note)},
		{Name: "create, allow-listed secret", Options: allowRegex, Input: createInput("/memories/k.md", two),
			Want: fail(refused("/memories/k.md", "slack-bot-token on line 3"))},
		{Name: "create, allow-listed path", Options: allowPath, Input: createInput("/memories/fixtures/a/k.md", note),
			Want: ok(created("/memories/fixtures/a/k.md")), WantFiles: files("/memories/fixtures/a/k.md", note)},
		{Name: "create, beside an allow-listed path", Options: allowPath, Input: createInput("/memories/fixtures.md", note),
			Want: fail(refused("/memories/fixtures.md", "aws-access-token on line 2"))},

		// str_replace and insert: the new content is scanned; lines are its.
		{Name: "str_replace, reject", Options: reject, Files: start, Input: replaceInput("/memories/f.md", "l5", "key "+awsKey),
			Want: fail(refused("/memories/f.md", "aws-access-token on line 5"))},
		{Name: "str_replace, redact", Options: redact, Files: start, Input: replaceInput("/memories/f.md", "l5", "key "+awsKey),
			Want: ok(strReplaced("     3\tl3\n     4\tl4\n     5\tkey [REDACTED:aws-access-token]\n     6\tl6\n     7\tl7") +
				redacted("[REDACTED:aws-access-token] on line 5")),
			WantFiles: files("/memories/f.md", "l1\nl2\nl3\nl4\nkey [REDACTED:aws-access-token]\nl6\nl7\nl8")},
		{Name: "str_replace, warn", Options: warn, Files: start, Input: replaceInput("/memories/f.md", "l5", awsKey),
			Want:      ok(strReplaced("     3\tl3\n     4\tl4\n     5\t" + awsKey + "\n     6\tl6\n     7\tl7")),
			WantFiles: files("/memories/f.md", "l1\nl2\nl3\nl4\n"+awsKey+"\nl6\nl7\nl8")},
		{Name: "str_replace, a secret made by the edit", Options: reject, Files: files("/memories/f.md", "AKIAZ3MSJV4W\n"),
			Input: replaceInput("/memories/f.md", "\n", "WNKWW5FG\n"), Want: fail(refused("/memories/f.md", "aws-access-token on line 1"))},
		{Name: "insert, reject", Options: reject, Files: start, Input: insertInput("/memories/f.md", 2, slackKey),
			Want: fail(refused("/memories/f.md", "slack-bot-token on line 3"))},
		{Name: "insert, redact", Options: redact, Files: start, Input: insertInput("/memories/f.md", 2, slackKey),
			Want:      ok(edited("/memories/f.md") + redacted("[REDACTED:slack-bot-token] on line 3")),
			WantFiles: files("/memories/f.md", "l1\nl2\n[REDACTED:slack-bot-token]\nl3\nl4\nl5\nl6\nl7\nl8")},
	}
}
