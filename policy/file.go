package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"gopkg.in/yaml.v3"
)

// maxFileBytes bounds a policy file: a policy is a few lines.
const maxFileBytes = 1 << 20

// fileForm is the YAML form of a policy file:
//
//	secrets: redact              # off, warn, redact or reject
//	allow:
//	  regexes: ['^AKIA[0-9A-Z]{12}EXAMPLE$']
//	  paths: ['/memories/fixtures/**']
//	expire:
//	  - path: /memories/scratch/**
//	    after: 7d
type fileForm struct {
	Secrets string `yaml:"secrets"`
	Allow   struct {
		Regexes []string `yaml:"regexes"`
		Paths   []string `yaml:"paths"`
	} `yaml:"allow"`
	Expire []expireForm `yaml:"expire"`
}

// Load reads the policy file at name (see Parse).
func Load(name string) (*Policy, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("policy: %s: %w", name, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("policy: %s: over %d bytes", name, maxFileBytes)
	}
	return Parse(name, data)
}

// Parse returns the policy the YAML data (a policy file's, named name in
// errors) gives. Every key and value is checked: an unknown key, a mode that
// is not one of the four, a regex that does not compile or a malformed path
// pattern, a bad expiry rule is an error naming the file and the line. A file that sets no
// mode has the mode Off.
func Parse(name string, data []byte) (*Policy, error) {
	var form fileForm
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&form); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("policy: %s: %w", name, err)
	}
	p := &Policy{}
	if form.Secrets != "" {
		m, err := ParseMode(form.Secrets)
		if err != nil {
			return nil, fmt.Errorf("policy: %s: %w", name, err)
		}
		p.Secrets = m
	}
	for _, expr := range form.Allow.Regexes {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("policy: %s: allow regex %q: %w", name, expr, err)
		}
		p.Allow.Regexes = append(p.Allow.Regexes, re)
	}
	for _, pat := range form.Allow.Paths {
		if err := CheckPattern(pat); err != nil {
			return nil, fmt.Errorf("policy: %s: allow %w", name, err)
		}
		p.Allow.Paths = append(p.Allow.Paths, pat)
	}
	for _, f := range form.Expire {
		r, err := f.rule()
		if err != nil {
			return nil, fmt.Errorf("policy: %s: %w", name, err)
		}
		p.Expire = append(p.Expire, r)
	}
	return p, nil
}
