package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// TestRacingDeletesKeepTheLimit: S3 deletes a missing key without
// complaint, so two handlers deleting one file at the same moment can both
// be told it was deleted. The file count must not then be taken down twice:
// after rounds of one create and several racing deletes of the same file,
// the store, filled by every handler until each is refused as full, holds
// no more files than max_files. The same on GCS and Azure, whose deletes
// tell a missing key.
func TestRacingDeletesKeepTheLimit(t *testing.T) {
	for _, b := range []struct {
		name  string
		store func(*testing.T) blob.Store
	}{{"S3", newS3Store}, {"GCS", newGCSStore}, {"Azure", newAzureStore}} {
		t.Run(b.name, func(t *testing.T) { racingDeletesKeepTheLimit(t, b.store(t)) })
	}
}

func racingDeletesKeepTheLimit(t *testing.T, store blob.Store) {
	const (
		maxFiles = 40
		handlers = 8
		rounds   = 12
	)
	ctx := t.Context()
	hs := make([]*memory.Handler, handlers)
	for i := range hs {
		h, err := memory.New(store, memory.Options{MaxFiles: maxFiles})
		if err != nil {
			t.Fatal(err)
		}
		hs[i] = h
	}
	// Every handler learns the count.
	for i, h := range hs {
		if res := h.Create(ctx, fmt.Sprintf("/memories/seed%d.md", i), "x"); res.IsError {
			t.Fatalf("seed %d: %s", i, res.Text)
		}
	}
	acked := 0
	for r := range rounds {
		if res := hs[r%handlers].Create(ctx, "/memories/x.md", "x"); res.IsError {
			t.Fatalf("round %d: create: %s", r, res.Text)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, h := range hs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if res := h.Delete(ctx, "/memories/x.md"); !res.IsError {
					mu.Lock()
					acked++
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
	}
	// Every handler creates until it is refused as full.
	for i, h := range hs {
		refused := false
		for j := 0; j <= maxFiles && !refused; j++ {
			refused = h.Create(ctx, fmt.Sprintf("/memories/h%d/f%d.md", i, j), "x").IsError
		}
		if !refused {
			t.Fatalf("handler %d made %d creates without a refusal, over max_files=%d", i, maxFiles+1, maxFiles)
		}
	}
	files := 0
	for info, err := range store.List(context.WithoutCancel(ctx), "") {
		if err != nil {
			t.Fatal(err)
		}
		if !blob.IsReserved(info.Key) { // the count and other bookkeeping are reserved
			files++
		}
	}
	t.Logf("%d deletes of %d acknowledged", acked, rounds*handlers)
	if files > maxFiles {
		t.Errorf("the store holds %d files, over max_files=%d (%d of %d racing deletes acknowledged, for %d files deleted)",
			files, maxFiles, acked, rounds*handlers, rounds)
	}
}
