package policy_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/policy"
)

const (
	awsKey   = "AKIAZ3MSJV4WWNKWW5FG"
	slackKey = "xoxb-123456789012-1234567890123-abcdefghijABCDEFGHIJklmn"
	privKey  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naIOQ9bGzbrYPFJ8a6ZzWqHTOXGYnTbTFIqrbHi1JcyeF5ogqn/aJMxZnMl3vdI6c\n-----END RSA PRIVATE KEY-----"
)

func TestParseMode(t *testing.T) {
	for _, m := range []policy.Mode{policy.Off, policy.Warn, policy.Redact, policy.Reject} {
		got, err := policy.ParseMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	for bad, want := range map[string]string{
		"":       `secrets="": want off, warn, redact or reject`,
		"Reject": `secrets="Reject": want off, warn, redact or reject`,
		"on":     `secrets="on": want off, warn, redact or reject`,
		"block":  `secrets="block": want off, warn, redact or reject`,
		" warn":  `secrets=" warn": want off, warn, redact or reject`,
	} {
		if _, err := policy.ParseMode(bad); err == nil || err.Error() != want {
			t.Errorf("ParseMode(%q) = %v, want %q", bad, err, want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"/memories/scratch/**", "/memories/scratch/a.md", true},
		{"/memories/scratch/**", "/memories/scratch/x/y/z.md", true},
		{"/memories/scratch/**", "/memories/scratch", true},
		{"/memories/scratch/**", "/memories/scratchpad/a.md", false},
		{"/memories/scratch/**", "/memories/a.md", false},
		{"/memories/*.md", "/memories/a.md", true},
		{"/memories/*.md", "/memories/d/a.md", false},
		{"/memories/**/*.log", "/memories/d/e/a.log", true},
		{"/memories/**/*.log", "/memories/a.log", true},
		{"/memories/s?/a", "/memories/s1/a", true},
		{"/memories/[", "/memories/[", false},
	} {
		if got := policy.Match(c.pattern, c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	p, err := policy.Parse("p.yaml", []byte("secrets: redact\nallow:\n  regexes: ['^AKIAZ3']\n  paths: ['/memories/fixtures/**']\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &policy.Policy{Secrets: policy.Redact, Allow: policy.Allow{Regexes: []*regexp.Regexp{regexp.MustCompile("^AKIAZ3")},
		Paths: []string{"/memories/fixtures/**"}}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("Parse = %+v, want %+v", p, want)
	}
	if p, err := policy.Parse("empty.yaml", nil); err != nil || p.Secrets != policy.Off {
		t.Errorf("an empty file: %+v, %v; want mode off", p, err)
	}
	for _, c := range []struct{ data, want string }{
		{"secrets: block\n", "policy: p.yaml: secrets=\"block\": want off, warn, redact or reject"},
		{"secret: reject\n", "policy: p.yaml: yaml: unmarshal errors:\n  line 1: field secret not found in type policy.fileForm"},
		{"secrets: [a]\n", "policy: p.yaml: yaml: unmarshal errors:\n  line 1: cannot unmarshal !!seq into string"},
		{"allow:\n  regexes: ['(']\n", "policy: p.yaml: allow regex \"(\": error parsing regexp: missing closing ): `(`"},
		{"allow:\n  paths: ['/tmp/**']\n", "policy: p.yaml: allow path pattern \"/tmp/**\": want a path under /memories, such as /memories/scratch/**"},
		{"allow:\n  paths: ['/memories/a**']\n", "policy: p.yaml: allow path pattern \"/memories/a**\": ** must be a whole segment"},
		{"allow:\n  paths: ['/memories/[']\n", "policy: p.yaml: allow path pattern \"/memories/[\": malformed segment \"[\""},
	} {
		_, err := policy.Parse("p.yaml", []byte(c.data))
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q) = %v, want %q", c.data, err, c.want)
		}
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(name, []byte("secrets: reject\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := policy.Load(name); err != nil || p.Secrets != policy.Reject {
		t.Errorf("Load = %+v, %v", p, err)
	}
	missing := filepath.Join(dir, "none.yaml")
	if _, err := policy.Load(missing); err == nil || err.Error() != "policy: open "+missing+": no such file or directory" {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func TestScan(t *testing.T) {
	p := &policy.Policy{Secrets: policy.Reject}
	text := "notes\naws " + awsKey + " and " + slackKey + "\n" + privKey + "\nend"
	got, err := p.Scan("/memories/a.md", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) (int, int) { i := strings.Index(text, s); return i, i + len(s) }
	a0, a1 := at(awsKey)
	s0, s1 := at(slackKey)
	k0, k1 := at(privKey)
	want := []policy.Finding{{"aws-access-token", 2, a0, a1}, {"slack-bot-token", 2, s0, s1}, {"private-key", 3, k0, k1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Scan = %+v, want %+v", got, want)
	}
	red := string(policy.Redacted([]byte(text), got))
	if wantRed := "notes\naws [REDACTED:aws-access-token] and [REDACTED:slack-bot-token]\n[REDACTED:private-key]\nend"; red != wantRed {
		t.Errorf("Redacted = %q, want %q", red, wantRed)
	}

	// Off, a nil policy and an allow-listed path scan nothing.
	for _, q := range []*policy.Policy{nil, {}, {Secrets: policy.Reject, Allow: policy.Allow{Paths: []string{"/memories/**"}}}} {
		if got, err := q.Scan("/memories/a.md", []byte(text)); got != nil || err != nil {
			t.Errorf("%v: Scan = %v, %v; want nothing", q, got, err)
		}
	}
	// An allow-listed secret is dropped, the others kept.
	q := &policy.Policy{Secrets: policy.Warn, Allow: policy.Allow{Regexes: []*regexp.Regexp{regexp.MustCompile("^xoxb-")}}}
	if got, _ := q.Scan("/memories/a.md", []byte(text)); len(got) != 2 || got[0].Rule != "aws-access-token" || got[1].Rule != "private-key" {
		t.Errorf("with the slack token allowed: %+v", got)
	}
	// A text with no secret.
	if got, _ := p.Scan("/memories/a.md", []byte("password: see the vault at ops/db\n")); len(got) != 0 {
		t.Errorf("a reference is not a secret: %+v", got)
	}
}

// One detector serves scans from many goroutines (run with -race).
func TestScanConcurrently(t *testing.T) {
	p := &policy.Policy{Secrets: policy.Redact}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan string, 32)
	for i := range 32 {
		wg.Go(func() {
			<-start
			text := strings.Repeat("x\n", i) + "k=" + awsKey + "\n"
			got, err := p.Scan("/memories/a.md", []byte(text))
			if err != nil || len(got) != 1 || got[0].Line != i+1 {
				errs <- "goroutine " + text + ": wrong findings"
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
