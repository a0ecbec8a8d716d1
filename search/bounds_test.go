package search

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

func mustPut(t *testing.T, s blob.Store, key, text string) {
	t.Helper()
	if _, err := s.Put(context.Background(), key, []byte(text), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
}

func hitPaths(t *testing.T, x *Index, q string) string {
	t.Helper()
	res, err := x.Search(context.Background(), Request{Query: q, Limit: MaxLimit})
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Path)
	}
	return strings.Join(out, " ")
}

// TestPrefixSkipsGoneTerms: a prefix word stands for the terms files still
// hold; the terms of a deleted file (here more than maxExpansions of them,
// sorting before the live one) do not crowd the live ones out.
func TestPrefixSkipsGoneTerms(t *testing.T) {
	s := mem.New(nil)
	var old strings.Builder
	for i := range 300 {
		fmt.Fprintf(&old, "proj%04d\n", i)
	}
	mustPut(t, s, "old.md", old.String())
	mustPut(t, s, "keep.md", "the project plan\n")
	x := New(s, &Options{MaxAge: -1})
	if got, want := hitPaths(t, x, "proj*"), "/memories/old.md"; got != want {
		t.Errorf("proj* before the delete = %q, want %q (256 expansions, all of old.md's)", got, want)
	}
	if err := s.Delete(context.Background(), "old.md", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if got, want := hitPaths(t, x, "proj*"), "/memories/keep.md"; got != want {
		t.Errorf("proj* after the delete = %q, want %q", got, want)
	}
}

// TestDictionaryCompacts: writing and deleting files of new words, round
// after round, keeps the dictionary within a bound instead of growing by
// every word ever seen, and the index still answers.
func TestDictionaryCompacts(t *testing.T) {
	s := mem.New(nil)
	mustPut(t, s, "keep.md", "steady words\n")
	x := New(s, &Options{MaxAge: -1, MaxFileBytes: 1 << 20})
	const perRound, rounds = 20_000, 12
	for r := range rounds {
		var b strings.Builder
		for i := range perRound {
			fmt.Fprintf(&b, "r%dw%d ", r, i)
		}
		mustPut(t, s, "churn.md", b.String())
		if got, want := hitPaths(t, x, fmt.Sprintf("r%dw7", r)), "/memories/churn.md"; got != want {
			t.Fatalf("round %d: %q, want %q", r, got, want)
		}
	}
	x.mu.RLock()
	n := len(x.p.dict.names)
	x.mu.RUnlock()
	if seen := rounds * perRound; n > 2*compactAt+perRound || n >= seen {
		t.Errorf("the dictionary holds %d terms after %d rounds of %d new words; want at most %d", n, rounds, perRound, 2*compactAt+perRound)
	}
	if got, want := hitPaths(t, x, "steady"), "/memories/keep.md"; got != want {
		t.Errorf("after compaction: %q, want %q", got, want)
	}
	if got := hitPaths(t, x, "r0w7"); got != "" {
		t.Errorf("a word of a replaced version is found in %q", got)
	}
}

// failingList fails its listings while fail is set.
type failingList struct {
	blob.Store
	fail atomic.Bool
}

var errListing = errors.New("listing failed")

func (f *failingList) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	if f.fail.Load() {
		return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, errListing) }
	}
	return f.Store.List(ctx, prefix)
}

// TestRefreshKeepsWholeStoreChange: a Refresh that fails keeps a pending
// change of the whole store, so the next query lists the store again.
func TestRefreshKeepsWholeStoreChange(t *testing.T) {
	s := &failingList{Store: mem.New(nil)}
	x := New(s, &Options{MaxAge: time.Hour})
	if got := hitPaths(t, x, "late"); got != "" {
		t.Fatalf("an empty store found %q", got)
	}
	mustPut(t, s.Store, "late.md", "late words\n")
	x.Changed("") // a write at the root
	s.fail.Store(true)
	if err := x.Refresh(context.Background()); !errors.Is(err, errListing) {
		t.Fatalf("Refresh = %v, want the listing's error", err)
	}
	s.fail.Store(false)
	if got, want := hitPaths(t, x, "late"), "/memories/late.md"; got != want {
		t.Errorf("after the failed Refresh: %q, want %q", got, want)
	}
}

// TestStoreFileLimit: without Options.MaxFileBytes, the index reads files
// up to the store's limit (a URL's max_file_bytes), as the handler accepts
// them, not only up to the default.
func TestStoreFileLimit(t *testing.T) {
	s := blob.WithLimits(mem.New(nil), blob.Limits{MaxFileBytes: 300_000})
	mustPut(t, s, "big.md", strings.Repeat("filler ", 30_000)+"needle\n") // 210,007 bytes
	if got, want := hitPaths(t, New(s, nil), "needle"), "/memories/big.md"; got != want {
		t.Errorf("a 210 KB file under a 300 KB limit: %q, want %q", got, want)
	}
	if got := hitPaths(t, New(mem.New(nil), nil), "needle"); got != "" {
		t.Errorf("an empty store found %q", got)
	}
}
