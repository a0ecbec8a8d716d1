package policy

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// matchSegs matches the path segments segs against the pattern segments pat.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(segs); i++ {
				if matchSegs(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], segs[0]); err != nil || !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// CheckPattern returns an error when pattern is not a path pattern Match
// can use: it must start with /memories and each segment must be "**" or a
// well-formed path.Match pattern.
func CheckPattern(pattern string) error {
	if pattern != "/memories" && !strings.HasPrefix(pattern, "/memories/") {
		return fmt.Errorf("path pattern %q: want a path under /memories, such as /memories/scratch/**", pattern)
	}
	for seg := range strings.SplitSeq(strings.Trim(pattern, "/"), "/") {
		if seg == "**" {
			continue
		}
		if strings.Contains(seg, "**") {
			return fmt.Errorf("path pattern %q: ** must be a whole segment", pattern)
		}
		if _, err := path.Match(seg, ""); errors.Is(err, path.ErrBadPattern) {
			return fmt.Errorf("path pattern %q: malformed segment %q", pattern, seg)
		}
	}
	return nil
}
