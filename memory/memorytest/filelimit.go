package memorytest

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// raceFileLimit: the store holds one file less than the file limit, and
// every writer creates a file of its own at the same instant, each through
// its own Handler: exactly one is acknowledged, every other is refused as
// full, and the store then holds exactly the limit (docs/spec.md, "create":
// the file limit under racing creates). The first round starts without the
// handlers' file count (each racer may recount), the second with the count
// the first left.
func raceFileLimit(t *testing.T, s blob.Store) {
	const limit = 8
	for i := range limit - 1 {
		key := fmt.Sprintf("limit/f%d.md", i)
		if _, err := s.Put(t.Context(), key, []byte("x"), blob.Cond{}); err != nil {
			t.Fatalf("setup: Put %q: %v", key, err)
		}
	}
	for round := range 2 {
		handlers := make([]*memory.Handler, writers)
		for i := range handlers {
			h, err := memory.New(s, memory.Options{MaxFiles: limit, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatalf("memory.New: %v", err)
			}
			handlers[i] = h
		}
		path := func(i int) string { return fmt.Sprintf("/memories/limit/r%d-%02d.md", round, i) }
		results := make([]memory.Result, writers)
		race(func(i int) { results[i] = handlers[i].Execute(t.Context(), []byte(createInput(path(i), "new"))) })
		var acked []string
		refused := 0
		for i, r := range results {
			switch {
			case same(r, ok(created(path(i)))):
				acked = append(acked, strings.TrimPrefix(path(i), "/memories/"))
			case same(r, fail(full(limit, limit))):
				refused++
			default:
				t.Errorf("round %d, writer %d: %s", round, i, describe(r))
			}
		}
		present := memoryKeys(t, s, "limit/")
		var made []string
		for _, k := range present {
			if strings.HasPrefix(k, fmt.Sprintf("limit/r%d-", round)) {
				made = append(made, k)
			}
		}
		wantAcked := 1
		if round == 1 {
			wantAcked = 0 // the first round filled the store
		}
		if len(acked) != wantAcked || refused != writers-wantAcked || !slices.Equal(made, acked) || len(present) != limit {
			t.Errorf("round %d: acknowledged %q, refused %d, created %q, %d files in all; want %d acknowledged and present, %d refused, %d files",
				round, acked, refused, made, len(present), wantAcked, writers-wantAcked, limit)
		}
	}
}

// memoryKeys returns the keys of the memory files under prefix, in order.
func memoryKeys(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, prefix)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	var keys []string
	for _, info := range infos {
		if !blob.IsReserved(info.Key) {
			keys = append(keys, info.Key)
		}
	}
	return keys
}
