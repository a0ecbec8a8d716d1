package corpus

import (
	"strings"
	"testing"
)

// TestFiles checks that the corpus is what the benchmarks say: n files of
// about size bytes, the same on every run.
func TestFiles(t *testing.T) {
	a, b := Files(20, 10_000), Files(20, 10_000)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("file %d differs between two runs", i)
		}
		if n := len(a[i].Text); n < 10_000 || n > 10_300 {
			t.Errorf("file %d has %d bytes", i, n)
		}
	}
	if !strings.Contains(a[3].Text, Word(0)) {
		t.Errorf("the most frequent word %q is missing", Word(0))
	}
	t.Log(a[0].Text[:300], Queries())
}
