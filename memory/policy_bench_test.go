package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/policy"
)

// Two 10 KB memory files with no secret: note10K of ordinary prose, and
// dense10K whose every line holds the words that wake gitleaks' generic
// rules (key, token, password, secret, api), the scan's worst case.
var note10K, dense10K = lines10K("the user prefers concise answers, writes Go and Python, and meets the team on Tuesdays"),
	lines10K("the deploy token lives in the vault at ops/api; rotate the password and secret key monthly")

// lines10K returns numbered lines of text up to 10,000 bytes.
func lines10K(text string) string {
	var b strings.Builder
	for i := 0; b.Len() < 10_000; i++ {
		fmt.Fprintf(&b, "- %03d: %s\n", i, text)
	}
	return b.String()
}

// BenchmarkPolicyCreate measures a create of a 10 KB note on the file store
// (durable, as deployed) without a policy, with the mode off and with
// reject (which scans the whole note and finds nothing), and the scans
// alone. The target (issue 29): reject costs at most 10% more than no
// policy, and off nothing.
func BenchmarkPolicyCreate(b *testing.B) {
	for _, c := range []struct {
		name string
		p    *policy.Policy
		note string
	}{
		{"none", nil, note10K},
		{"off", &policy.Policy{}, note10K},
		{"reject", &policy.Policy{Secrets: policy.Reject}, note10K},
		{"reject-dense", &policy.Policy{Secrets: policy.Reject}, dense10K},
	} {
		b.Run("file/"+c.name, func(b *testing.B) {
			s := benchStores[1].open(b)
			h, err := memory.New(s, memory.Options{Logger: quiet, Policy: c.p})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			h.Create(ctx, "/memories/notes/seed.md", "x") // the count and the directory exist
			b.ReportAllocs()
			for b.Loop() {
				if r := h.Create(ctx, "/memories/notes/new.md", c.note); r.IsError {
					b.Fatal(r.Text)
				}
				b.StopTimer()
				if err := s.Delete(ctx, "notes/new.md", blob.Cond{}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
	for name, note := range map[string]string{"scan": note10K, "scan-dense": dense10K} {
		b.Run(name, func(b *testing.B) {
			p := &policy.Policy{Secrets: policy.Reject}
			data := []byte(note)
			b.ReportAllocs()
			for b.Loop() {
				if fs, err := p.Scan("/memories/notes/new.md", data); err != nil || len(fs) != 0 {
					b.Fatal(fs, err)
				}
			}
		})
	}
}
