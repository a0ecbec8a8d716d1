package search

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/internal/corpus"
)

// TestAnalyseMatchesTerms checks analyse, which remembers spellings from
// text to text, against terms, which folds every word: for each text, the
// term at each position (from the analysis's postings) is the whole list
// terms gives, and each term ID names its term. The texts are the
// benchmark corpus (many spellings, so the tables grow mid-text), texts of
// new words only, Unicode spellings of one term, and the same texts into a
// second dictionary with the same scratches (each dictionary its own IDs).
func TestAnalyseMatchesTerms(t *testing.T) {
	var texts []string
	for _, f := range corpus.Files(100, 10_000) {
		texts = append(texts, f.Text)
	}
	var fresh strings.Builder
	for i := range 5000 { // 5,000 spellings never met: the table grows while the text is read
		fmt.Fprintf(&fresh, "New%d new%d ", i, i)
	}
	texts = append(texts, fresh.String(),
		"Café CAFÉ cafe\u0301 Ｃａｆé café 東京 the The THE", "", "!!! ...", "ﬁle Straße STRASSE 1½")
	check := func(d *dict, text string) {
		t.Helper()
		a := analyse(text, d)
		d.mu.RLock() // other goroutines add terms
		defer d.mu.RUnlock()
		got := make([]string, a.length)
		for i, id := range a.terms {
			for _, at := range a.pos[a.off[i] : a.off[i]+a.n[i]] {
				got[at] = d.names[id]
			}
		}
		if want := terms(text); !slices.Equal(got, want) && len(want)+len(got) > 0 {
			t.Errorf("analyse of %.40q: %d terms, want %d\n got %.200q\nwant %.200q", text, len(got), len(want), got, want)
		}
	}
	first, second := &dict{ids: map[string]uint32{}}, &dict{ids: map[string]uint32{}}
	for _, text := range texts {
		check(first, text)
	}
	for _, text := range slices.Backward(texts) { // other IDs for the same spellings
		check(second, text)
		check(first, text)
	}
	// Several goroutines at once, one dictionary: each its own scratch.
	third := &dict{ids: map[string]uint32{}}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, text := range texts[:50] {
				check(third, text)
			}
		})
	}
	wg.Wait()
	for _, d := range []*dict{first, second, third} {
		if len(d.names) != len(d.ids) {
			t.Errorf("%d names, %d IDs", len(d.names), len(d.ids))
		}
		for term, id := range d.ids {
			if d.names[id] != term {
				t.Errorf("term %q has the ID of %q", term, d.names[id])
			}
		}
	}
}
