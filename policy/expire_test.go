package policy_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/policy"
)

func TestParseExpire(t *testing.T) {
	data := "secrets: warn\nexpire:\n  - path: /memories/scratch/**\n    after: 7d\n  - path: /memories/**/*.log\n    after: 12h\n"
	p, err := policy.Parse("p.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := &policy.Policy{Secrets: policy.Warn, Expire: []policy.ExpireRule{
		{Path: "/memories/scratch/**", After: 7 * 24 * time.Hour}, {Path: "/memories/**/*.log", After: 12 * time.Hour}}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Parse = %+v, want %+v", p, want)
	}
	for _, c := range []struct {
		path  string
		after time.Duration
		ok    bool
	}{
		{"/memories/scratch/a.md", 7 * 24 * time.Hour, true},
		{"/memories/scratch/x.log", 12 * time.Hour, true}, // the shorter of two
		{"/memories/a.log", 12 * time.Hour, true},
		{"/memories/a.md", 0, false},
	} {
		if after, ok := p.ExpiresAfter(c.path); after != c.after || ok != c.ok {
			t.Errorf("ExpiresAfter(%q) = %v, %v; want %v, %v", c.path, after, ok, c.after, c.ok)
		}
	}
	if _, ok := (*policy.Policy)(nil).ExpiresAfter("/memories/a"); ok {
		t.Error("a nil policy expires nothing")
	}

	const ageWant = ": want a whole number and a unit (s, m, h or d), such as 7d or 12h, at most 36500d"
	for _, c := range []struct{ data, want string }{
		{"expire:\n  - path: /memories/s/**\n    after: 7\n", `policy: p.yaml: expire rule on line 2: after "7"` + ageWant},
		{"expire:\n  - path: /memories/s/**\n    after: 1w\n", `policy: p.yaml: expire rule on line 2: after "1w"` + ageWant},
		{"expire:\n  - path: /memories/s/**\n    after: 0d\n", `policy: p.yaml: expire rule on line 2: after "0d"` + ageWant},
		{"expire:\n  - path: /memories/s/**\n    after: -1h\n", `policy: p.yaml: expire rule on line 2: after "-1h"` + ageWant},
		{"expire:\n  - path: /memories/s/**\n    after: 1.5h\n", `policy: p.yaml: expire rule on line 2: after "1.5h"` + ageWant},
		{"expire:\n  - path: /memories/s/**\n    after: 36501d\n", `policy: p.yaml: expire rule on line 2: after "36501d"` + ageWant},
		{"expire:\n  - path: /memories/s/**\n    after: 99999999999999999999s\n", `policy: p.yaml: expire rule on line 2: after "99999999999999999999s"` + ageWant},
		{"expire:\n  - path: /memories/a\n    after: 1d\n  - after: 1d\n", "policy: p.yaml: expire rule on line 4: path is missing (want a path pattern, such as /memories/scratch/**)"},
		{"expire:\n  - path: /memories/a\n", "policy: p.yaml: expire rule on line 2: after is missing (want an age, such as 7d or 12h)"},
		{"expire:\n  - path: /scratch/**\n    after: 1d\n", `policy: p.yaml: expire rule on line 2: path pattern "/scratch/**": want a path under /memories, such as /memories/scratch/**`},
		{"expire:\n  - path: /memories/a**\n    after: 1d\n", `policy: p.yaml: expire rule on line 2: path pattern "/memories/a**": ** must be a whole segment`},
		{"expire:\n  - path: /memories/s\n    age: 1d\n", `policy: p.yaml: expire rule on line 2: unknown key "age" (want path, after)`},
		{"expire:\n  - /memories/s/**\n", "policy: p.yaml: line 2: an expire rule must be a mapping with path and after"},
		{"expire:\n  - path: [a]\n    after: 1d\n", "policy: p.yaml: line 2: an expire rule's path must be a string"},
		{"expire: 7d\n", "policy: p.yaml: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!str `7d` into []policy.expireForm"},
	} {
		_, err := policy.Parse("p.yaml", []byte(c.data))
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q) = %v,\nwant %q", c.data, err, c.want)
		}
	}
	for s, want := range map[string]time.Duration{"1s": time.Second, "90m": 90 * time.Minute, "12h": 12 * time.Hour, "7d": 7 * 24 * time.Hour, "36500d": policy.MaxExpireAfter} {
		if got, err := policy.ParseAge(s); got != want || err != nil {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
}
