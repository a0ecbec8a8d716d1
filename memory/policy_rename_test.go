package memory_test

import (
	"errors"
	"maps"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
	"github.com/cloudmem/cloudmem/policy"
)

// A rename into a path the policy scans, from one it does not (an
// allow-listed path, a mount of another policy), scans each file it moves:
// under reject and redact a secret refuses the whole rename and nothing
// moves (docs/spec.md "Write policies", "Rename"); under warn it moves.
func TestPolicyRename(t *testing.T) {
	const advice = "; nothing was moved. Memory files keep no secrets: write where a secret is kept (a vault path, an environment variable's name) instead of the secret itself."
	secret := "k " + plantedKey
	allow := policy.Allow{Paths: []string{"/memories/fixtures/**"}}
	seed := map[string]string{"fixtures/k.md": secret, "fixtures/d/a.md": "plain", "fixtures/d/b.md": "x\n" + secret + "\n" + secret, "fixtures/c.md": "clean"}
	for _, tc := range []struct {
		name     string
		mode     policy.Mode
		old, new string
		want     string
		moved    bool
	}{
		{"file reject", policy.Reject, "/memories/fixtures/k.md", "/memories/k.md",
			"Error: Moving /memories/fixtures/k.md to /memories/k.md would put a secret into /memories/k.md (aws-access-token on line 1)" + advice, false},
		{"file redact", policy.Redact, "/memories/fixtures/k.md", "/memories/k.md",
			"Error: Moving /memories/fixtures/k.md to /memories/k.md would put a secret into /memories/k.md (aws-access-token on line 1)" + advice, false},
		{"directory", policy.Reject, "/memories/fixtures/d", "/memories/d",
			"Error: Moving /memories/fixtures/d to /memories/d would put 2 secrets into /memories/d/b.md (aws-access-token on line 2, aws-access-token on line 3)" + advice, false},
		{"clean file", policy.Reject, "/memories/fixtures/c.md", "/memories/c.md", "Successfully renamed /memories/fixtures/c.md to /memories/c.md", true},
		{"within the allow-list", policy.Reject, "/memories/fixtures/k.md", "/memories/fixtures/k2.md",
			"Successfully renamed /memories/fixtures/k.md to /memories/fixtures/k2.md", true},
		{"warn", policy.Warn, "/memories/fixtures/k.md", "/memories/k.md", "Successfully renamed /memories/fixtures/k.md to /memories/k.md", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s := mem.New(nil)
			for k, v := range seed {
				if _, err := s.Put(ctx, k, []byte(v), blob.Cond{}); err != nil {
					t.Fatal(err)
				}
			}
			h, err := memory.New(blob.WithPolicy(s, &policy.Policy{Secrets: tc.mode, Allow: allow}), memory.Options{Logger: quiet, MaxFiles: -1})
			if err != nil {
				t.Fatal(err)
			}
			res := h.Rename(ctx, tc.old, tc.new)
			if res.Text != tc.want {
				t.Errorf("got  %q\nwant %q", res.Text, tc.want)
			}
			if !tc.moved && !errors.Is(res.Err, memory.ErrSecret) {
				t.Errorf("kind %v, want ErrSecret", res.Err)
			}
			if got := storeContents(t, s); tc.moved == maps.Equal(got, seed) {
				t.Errorf("moved %v, the store holds %q", tc.moved, got)
			}
		})
	}

	// Into a mount of a stricter policy.
	ctx := t.Context()
	open := mem.New(nil)
	if _, err := open.Put(ctx, "k.md", []byte(secret), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	tb, err := mount.New([]mount.Mount{{Name: "open", Store: open},
		{Name: "strict", Store: blob.WithPolicy(mem.New(nil), &policy.Policy{Secrets: policy.Reject})}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(tb, memory.Options{Logger: quiet, MaxFiles: -1})
	if err != nil {
		t.Fatal(err)
	}
	want := "Error: Moving /memories/open/k.md to /memories/strict/k.md would put a secret into /memories/strict/k.md (aws-access-token on line 1)" + advice
	if res := h.Rename(ctx, "/memories/open/k.md", "/memories/strict/k.md"); res.Text != want {
		t.Errorf("across mounts: %q\nwant %q", res.Text, want)
	}
}

// On the file store, whose Rename itself refuses what rename's own checks
// look for, a policy's scan still comes after them (docs/spec.md, "Rename"):
// a rename of a file holding a secret onto a taken destination (in another
// directory or within the known tree), or under a file, is refused in
// rename's own words.
func TestPolicyRenameAfterOwnChecks(t *testing.T) {
	ctx := t.Context()
	secret := "k " + plantedKey
	s := newFile(t)
	for k, v := range map[string]string{"fixtures/k.md": secret, "other/k.md": "taken", "f.md": "a file", "k.md": "taken too"} {
		if _, err := s.Put(ctx, k, []byte(v), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	allow := policy.Allow{Paths: []string{"/memories/fixtures/**"}}
	h, err := memory.New(blob.WithPolicy(s, &policy.Policy{Secrets: policy.Reject, Allow: allow}), memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	before := memoryFiles(t, s, "")
	for _, c := range []struct{ to, want string }{
		{"/memories/other/k.md", "Error: The destination /memories/other/k.md already exists"},
		{"/memories/f.md/k.md", "Error: The path /memories/f.md is a file, not a directory"},
		{"/memories/k.md", "Error: The destination /memories/k.md already exists"}, // within the known tree
	} {
		if got := h.Rename(ctx, "/memories/fixtures/k.md", c.to).Text; got != c.want {
			t.Errorf("rename to %s: got %q, want %q", c.to, got, c.want)
		}
	}
	if after := memoryFiles(t, s, ""); !maps.Equal(after, before) {
		t.Errorf("the files changed from %v to %v", before, after)
	}
}
