package memory_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Over a store prefixed with 300 bytes (blob.Prefix leaves 1024-301 = 723
// key bytes), a path the contract accepts but whose key would not fit is
// "too long" before any storage call, not a storage failure; one that fits
// is created.
func TestPrefixKeyBudget(t *testing.T) {
	prefix := strings.Repeat("p", 200) + "/" + strings.Repeat("q", 99) // 300 bytes
	p, err := blob.Prefix(mem.New(nil), prefix)
	if err != nil {
		t.Fatal(err)
	}
	counter := blob.NewCounter(p)
	h, err := memory.New(counter, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	dir := "/memories/" + strings.Repeat(strings.Repeat("d", 200)+"/", 3) // 603 key bytes so far
	fits := dir + strings.Repeat("f", 723-603)
	over := fits + "g"
	if got, want := h.Create(t.Context(), over, "x").Text, "Error: Path "+over+" is too long"; got != want {
		t.Errorf("create over the budget:\n got %q\nwant %q", got, want)
	}
	if n := counter.Counts(); n.Total() != 0 {
		t.Errorf("create over the budget made storage calls: %+v", n)
	}
	if got, want := h.Create(t.Context(), fits, "x").Text, "File created successfully at: "+fits; got != want {
		t.Errorf("create within the budget:\n got %q\nwant %q", got, want)
	}
}

// A directory of 20,000 files answers a listing bounded by the view limit:
// the header, lines within 16,000 code points, and the note, whose counts
// are those of the whole listing.
func TestHugeDirectoryListingIsBounded(t *testing.T) {
	s := mem.New(nil)
	for i := range 20000 {
		if _, err := s.Put(t.Context(), fmt.Sprintf("big/f%05d.md", i), []byte("x"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := memory.New(s, memory.Options{Logger: quiet, MaxFiles: -1})
	if err != nil {
		t.Fatal(err)
	}
	text := h.View(t.Context(), "/memories/big", nil).Text
	header := "Here're the files and directories up to 2 levels deep in /memories/big, excluding hidden items and node_modules:\n"
	body, ok := strings.CutPrefix(text, header)
	if !ok {
		t.Fatalf("no header: %.200q", text)
	}
	// Each entry line is "\n1B\t/memories/big/fNNNNN.md": 27 code points;
	// the first line "19.5K\t/memories/big" 19. (16000-19)/27 = 591 entries.
	lines, note, _ := strings.Cut(body, "\n[Output truncated: ")
	if n := len([]rune(lines)); n > memory.DefaultViewLimit {
		t.Errorf("the listing lines take %d code points, over %d", n, memory.DefaultViewLimit)
	}
	if want := "showing 591 of 20000 entries. View a subdirectory to see the rest.]"; note != want {
		t.Errorf("note: got %q, want %q", note, want)
	}
	if got := strings.Count(lines, "\n"); got != 591 {
		t.Errorf("%d entry lines, want 591", got)
	}
}
