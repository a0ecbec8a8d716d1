package policy

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// Finding is one secret found in a text. It holds where the secret lies and
// which rule found it, never the secret's bytes.
type Finding struct {
	// Rule is the gitleaks rule that found it (aws-access-token,
	// github-pat, private-key, generic-api-key, ...).
	Rule string
	// Line is the 1-based number of the text's line where the secret
	// starts, as view numbers lines.
	Line int
	// Start and End are the secret's byte offsets in the text.
	Start, End int
}

// Scan returns the secrets found in data, the whole text to be written to
// the file path, after the allow-list, in order of their place in data;
// secrets that overlap are one Finding (the first rule's). It returns nil
// without scanning when p does not scan path (see Scans). The error is set
// only when the rule set could not be built, which a test of this package
// rules out; a caller must then refuse the write.
//
// Encoded secrets (base64, hex, percent-encoding) are not decoded: a secret
// is found as it is written.
func (p *Policy) Scan(path string, data []byte) ([]Finding, error) {
	if !p.Scans(path) {
		return nil, nil
	}
	d, err := detector()
	if err != nil {
		return nil, err
	}
	found := d.DetectString(string(data))
	out := make([]Finding, 0, len(found))
	for _, f := range found {
		secret := cmp.Or(f.Secret, f.Match)
		if p.allowed(secret) {
			continue
		}
		start, end := locate(data, secret, f.StartLine, f.EndLine)
		out = append(out, Finding{Rule: f.RuleID, Line: 1 + bytes.Count(data[:start], []byte{'\n'}), Start: start, End: end})
	}
	return merge(out), nil
}

// allowed reports whether an allow-list regex matches secret.
func (p *Policy) allowed(secret string) bool {
	for _, re := range p.Allow.Regexes {
		if re.MatchString(secret) {
			return true
		}
	}
	return false
}

// locate returns the byte offsets of secret in data, found by gitleaks on
// its (0-based) lines first to last: its first occurrence from the start
// of line first, else anywhere; when it is not there verbatim, the whole
// lines first to last.
func locate(data []byte, secret string, first, last int) (start, end int) {
	from := lineOffset(data, first)
	if i := bytes.Index(data[from:], []byte(secret)); secret != "" && i >= 0 {
		return from + i, from + i + len(secret)
	}
	if i := bytes.Index(data, []byte(secret)); secret != "" && i >= 0 {
		return i, i + len(secret)
	}
	end = lineOffset(data, max(last, first)+1)
	if end > from && data[end-1] == '\n' {
		end--
	}
	return from, end
}

// lineOffset returns the offset of the start of data's 0-based line n, or
// len(data) when data has fewer lines.
func lineOffset(data []byte, n int) int {
	at := 0
	for ; n > 0; n-- {
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			return len(data)
		}
		at += i + 1
	}
	return at
}

// merge sorts fs by place and folds overlapping findings into the first.
func merge(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int { return cmp.Or(a.Start-b.Start, b.End-a.End) })
	out := fs[:0]
	for _, f := range fs {
		if n := len(out); n > 0 && f.Start < out[n-1].End {
			out[n-1].End = max(out[n-1].End, f.End)
			continue
		}
		out = append(out, f)
	}
	return out
}

// Redacted returns data with each finding's bytes replaced by
// [REDACTED:{rule}]. fs must be Scan's findings of data.
func Redacted(data []byte, fs []Finding) []byte {
	var b bytes.Buffer
	b.Grow(len(data))
	at := 0
	for _, f := range fs {
		b.Write(data[at:f.Start])
		b.WriteString(Placeholder(f.Rule))
		at = f.End
	}
	b.Write(data[at:])
	return b.Bytes()
}

// Placeholder is the text that replaces a secret the rule found.
func Placeholder(rule string) string { return "[REDACTED:" + rule + "]" }

// detector returns the process's one gitleaks detector, built on first use
// from gitleaks' default rule set. It is safe for concurrent use: its scans
// read the rules and keep no findings.
var detector = sync.OnceValues(func() (*detect.Detector, error) {
	// gitleaks' own log lines quote the secrets it finds (at debug
	// level); none may reach a log.
	logging.Logger = zerolog.Nop()
	v := viper.New() // not viper's global instance, which others may use
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, fmt.Errorf("policy: reading the gitleaks rule set: %w", err)
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, fmt.Errorf("policy: reading the gitleaks rule set: %w", err)
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, fmt.Errorf("policy: building the gitleaks rule set: %w", err)
	}
	return detect.NewDetector(cfg), nil
})

// maxListed is how many findings List names.
const maxListed = 10

// List returns "{rule} on line {line}" for the first ten findings of fs
// (with placeholders, the rule's placeholder instead of the rule), joined
// by ", ", then ", … ({n} in all)" when there are more: how the memory
// tool's texts and history's records name secrets, never the secret.
func List(fs []Finding, placeholders bool) string {
	var b strings.Builder
	for i, f := range fs[:min(len(fs), maxListed)] {
		if i > 0 {
			b.WriteString(", ")
		}
		if placeholders {
			b.WriteString(Placeholder(f.Rule))
		} else {
			b.WriteString(f.Rule)
		}
		b.WriteString(" on line " + strconv.Itoa(f.Line))
	}
	if len(fs) > maxListed {
		b.WriteString(", … (" + strconv.Itoa(len(fs)) + " in all)")
	}
	return b.String()
}
