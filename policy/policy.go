// Package policy holds the write policies of a memory tree: what the memory
// handler (package memory, the one writer of memory files) does with a text
// that holds a secret, before it writes it.
//
// # Secrets
//
// A Policy's Secrets mode says what a write holding a secret gets:
//
//	off     nothing is scanned (the default; it costs nothing)
//	warn    the text is written as it is; each finding is logged and counted
//	redact  each secret is replaced by [REDACTED:{rule}] before the text is written
//	reject  nothing is written; the writer gets an error naming the rule and the line
//
// Secrets are found by the rule set of gitleaks (its default configuration,
// about 200 rules: cloud keys, tokens of the usual services, private keys,
// generic "password = ..." assignments). The detector is built the first
// time a policy whose mode is not off scans a text, once per process.
// Allow-list entries drop findings: a regular expression that matches the
// secret itself, or a path pattern that matches the file's path.
//
// A Policy comes from a store URL's secrets= and policy= parameters (package
// storeurl), from a policy file (Load, Parse), or from Go.
//
// # Expiry
//
// A Policy's Expire rules make files expire (see ExpireRule): a path
// pattern and an age since the file's last change. The store wrapper
// blob.WithExpiry hides and deletes expired files; package storeurl puts it
// over a store whose policy file has rules.
//
// No error, log line or Finding of this package holds a secret: a Finding
// has the rule, the line and the secret's place in the text, never its
// bytes.
package policy

import (
	"fmt"
	"regexp"
	"strings"
)

// Mode is what a Policy does with a write that holds a secret.
type Mode int

// The modes, in the order of their strength. The zero Mode is Off.
const (
	Off    Mode = iota // nothing is scanned
	Warn               // written as it is; logged and counted
	Redact             // each secret replaced by [REDACTED:{rule}], then written
	Reject             // nothing written; the writer gets an error
)

var modeNames = [...]string{Off: "off", Warn: "warn", Redact: "redact", Reject: "reject"}

// String returns the mode's name as the URL and the policy file spell it.
func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// ParseMode returns the Mode named s ("off", "warn", "redact", "reject").
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return Off, fmt.Errorf("secrets=%q: want off, warn, redact or reject", s)
}

// Policy is a memory tree's write policy. The zero Policy (and a nil
// *Policy) scans nothing. A Policy must not be changed once a handler uses
// it; it is then safe for concurrent use.
type Policy struct {
	// Secrets is what a write holding a secret gets.
	Secrets Mode
	// Allow drops findings that are known not to be secrets.
	Allow Allow
	// Expire are the expiry rules (see ExpireRule): none, and no file
	// expires.
	Expire []ExpireRule
}

// Allow is a Policy's allow-list.
type Allow struct {
	// Regexes: a finding whose secret one of them matches is dropped
	// (for example a documented example key).
	Regexes []*regexp.Regexp
	// Paths are path patterns (see Match): nothing written to a file
	// whose path one of them matches is scanned.
	Paths []string
}

// Scans reports whether p scans what is written to path: its mode is not
// Off and no allow-listed path pattern matches path.
func (p *Policy) Scans(path string) bool {
	if p == nil || p.Secrets == Off {
		return false
	}
	for _, pat := range p.Allow.Paths {
		if Match(pat, path) {
			return false
		}
	}
	return true
}

// String describes p without its allow-list's contents, for logs.
func (p *Policy) String() string {
	if p == nil {
		return "secrets=off"
	}
	s := "secrets=" + p.Secrets.String()
	if n := len(p.Allow.Regexes) + len(p.Allow.Paths); n > 0 {
		s += fmt.Sprintf(" (%d allow-list entries)", n)
	}
	if n := len(p.Expire); n > 0 {
		s += fmt.Sprintf(", %d expiry rules", n)
	}
	return s
}

// Match reports whether path matches pattern. Both are slash-separated
// paths (/memories/scratch/a.md); a pattern's segment is matched as
// path.Match does (*, ?, [...] within one segment), and a segment "**"
// matches any number of whole segments, none included: /memories/scratch/**
// matches everything under /memories/scratch. A malformed pattern matches
// nothing (CheckPattern reports it).
func Match(pattern, path string) bool {
	return matchSegs(strings.Split(strings.Trim(pattern, "/"), "/"), strings.Split(strings.Trim(path, "/"), "/"))
}
