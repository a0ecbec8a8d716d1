package memory_test

import (
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
