package policy

import (
	"fmt"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// ExpireRule is one expiry rule: files whose path Path matches (see Match)
// expire After their last change.
type ExpireRule struct {
	Path  string        // a path pattern under /memories
	After time.Duration // from 1s up
}

// MaxExpireAfter bounds an expiry rule's age: 100 years.
const MaxExpireAfter = 36500 * 24 * time.Hour

// ExpiresAfter returns how long after its last change the file at path
// lives under p, and false when no rule of p matches path (the file never
// expires). When several rules match, the shortest age holds: every rule
// is kept.
func (p *Policy) ExpiresAfter(path string) (time.Duration, bool) {
	if p == nil {
		return 0, false
	}
	var after time.Duration
	found := false
	for _, r := range p.Expire {
		if Match(r.Path, path) && (!found || r.After < after) {
			after, found = r.After, true
		}
	}
	return after, found
}

// units are the units of an expiry rule's age.
var units = map[byte]time.Duration{'s': time.Second, 'm': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}

// ParseAge returns the age s spells: a whole number from 1 and one unit, s
// (seconds), m (minutes), h (hours) or d (days of 24 hours), such as 7d or
// 12h, at most 36500d.
func ParseAge(s string) (time.Duration, error) {
	bad := fmt.Errorf("after %q: want a whole number and a unit (s, m, h or d), such as 7d or 12h, at most 36500d", s)
	if len(s) < 2 {
		return 0, bad
	}
	unit, ok := units[s[len(s)-1]]
	digits := s[:len(s)-1]
	if !ok || digits[0] < '1' || digits[0] > '9' {
		return 0, bad
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > int64(MaxExpireAfter/unit) {
		return 0, bad
	}
	return time.Duration(n) * unit, nil
}

// expireForm is the YAML form of one expiry rule, with the line it starts on.
type expireForm struct {
	Path    string `yaml:"path"`
	After   string `yaml:"after"`
	line    int
	unknown string // the first key that is neither path nor after
}

// UnmarshalYAML decodes a rule, keeping its line for errors.
func (f *expireForm) UnmarshalYAML(n *yaml.Node) error {
	f.line = n.Line
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: an expire rule must be a mapping with path and after", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		var dst *string
		switch k.Value {
		case "path":
			dst = &f.Path
		case "after":
			dst = &f.After
		default:
			if f.unknown == "" {
				f.unknown = k.Value
			}
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: an expire rule's %s must be a string", v.Line, k.Value)
		}
		*dst = v.Value
	}
	return nil
}

// rule checks the rule f and returns it; its errors name the rule by its
// line.
func (f expireForm) rule() (ExpireRule, error) {
	at := fmt.Sprintf("expire rule on line %d", f.line)
	if f.unknown != "" {
		return ExpireRule{}, fmt.Errorf("%s: unknown key %q (want path, after)", at, f.unknown)
	}
	if f.Path == "" {
		return ExpireRule{}, fmt.Errorf("%s: path is missing (want a path pattern, such as /memories/scratch/**)", at)
	}
	if err := CheckPattern(f.Path); err != nil {
		return ExpireRule{}, fmt.Errorf("%s: %w", at, err)
	}
	if f.After == "" {
		return ExpireRule{}, fmt.Errorf("%s: after is missing (want an age, such as 7d or 12h)", at)
	}
	after, err := ParseAge(f.After)
	if err != nil {
		return ExpireRule{}, fmt.Errorf("%s: %w", at, err)
	}
	return ExpireRule{Path: f.Path, After: after}, nil
}
