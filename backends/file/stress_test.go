//go:build unix

package file_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
)

// TestPutsDuringTreeMoves writes into a directory while other goroutines
// move it away, back, and delete it: every Put must succeed, and every
// object a concurrent reader lists must be complete.
func TestPutsDuringTreeMoves(t *testing.T) {
	ctx := t.Context()
	s, err := file.Open(ctx, t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var movers, writersDone sync.WaitGroup
	var moves, deletes atomic.Int64
	movers.Go(func() {
		for !stop.Load() {
			err := blob.Rename(ctx, s, "t", "u")
			if err == nil {
				moves.Add(1)
				err = blob.Rename(ctx, s, "u", "t")
			}
			if err != nil && !errors.Is(err, blob.ErrNotExist) && !errors.Is(err, blob.ErrPrecondition) {
				t.Errorf("Rename: %v", err)
				return
			}
		}
	})
	movers.Go(func() {
		for !stop.Load() {
			err := blob.DeleteTree(ctx, s, "u")
			if err == nil {
				deletes.Add(1)
			} else if !errors.Is(err, blob.ErrNotExist) {
				t.Errorf("DeleteTree: %v", err)
				return
			}
		}
	})
	const writers, each = 4, 100
	for w := range writers {
		writersDone.Go(func() {
			for i := range each {
				key := fmt.Sprintf("t/w%d/k%03d", w, i)
				if _, err := s.Put(ctx, key, []byte(key), blob.Cond{}); err != nil {
					t.Errorf("Put(%q): %v", key, err)
				}
			}
		})
	}
	// A reader checks that every listed object is complete meanwhile.
	var reader sync.WaitGroup
	reader.Go(func() {
		for {
			infos, err := blob.ListAll(ctx, s, "")
			if err != nil {
				t.Errorf("List: %v", err)
				return
			}
			for _, info := range infos {
				data, _, err := s.Get(ctx, info.Key, blob.MaxObjectBytes)
				if err != nil && !errors.Is(err, blob.ErrNotExist) {
					t.Errorf("Get(%q): %v", info.Key, err)
				}
				if err == nil && string(data) != "t"+info.Key[1:] {
					t.Errorf("Get(%q) = %q", info.Key, data)
				}
			}
			if stop.Load() {
				return
			}
		}
	})
	writersDone.Wait()
	stop.Store(true)
	movers.Wait()
	reader.Wait()
	t.Logf("%d tree moves and %d tree deletes during %d Puts", moves.Load(), deletes.Load(), writers*each)
}
