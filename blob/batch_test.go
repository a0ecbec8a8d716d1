package blob_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

var errDeleteFailed = errors.New("injected delete failure")

// slowDeletes is a store without capabilities whose Deletes take a little
// while and are counted, with the most in flight at once; it fails the
// Delete of the key fail.
type slowDeletes struct {
	blob.Store
	fail string

	mu               sync.Mutex
	calls, now, most int
}

func (s *slowDeletes) Delete(ctx context.Context, key string, cond blob.Cond) error {
	s.mu.Lock()
	s.calls++
	s.now++
	s.most = max(s.most, s.now)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.now--
		s.mu.Unlock()
	}()
	time.Sleep(2 * time.Millisecond)
	if key == s.fail {
		return fmt.Errorf("delete %q: %w", key, errDeleteFailed)
	}
	return s.Store.Delete(ctx, key, cond)
}

func seedKeys(t *testing.T, s blob.Store, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := s.Put(t.Context(), k, []byte(k), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
}

func storeKeys(t *testing.T, s blob.Store) []string {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, info := range infos {
		keys = append(keys, info.Key)
	}
	return keys
}

// The fallback deletes every key, missing ones included without error,
// overlapping its Deletes but never more than DeleteParallel at once.
func TestDeleteKeysFallback(t *testing.T) {
	inner := mem.New(nil)
	var keys []string
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("d/k%03d", i))
	}
	seedKeys(t, inner, keys[:90]...) // the last 10 do not exist
	seedKeys(t, inner, "keep")
	s := &slowDeletes{Store: inner}
	if err := blob.DeleteKeys(t.Context(), s, keys); err != nil {
		t.Fatal(err)
	}
	if got, want := storeKeys(t, inner), []string{"keep"}; !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
	if s.calls != 100 || s.most <= 1 || s.most > blob.DeleteParallel {
		t.Errorf("%d Deletes, at most %d at once; want 100, 2 to %d at once", s.calls, s.most, blob.DeleteParallel)
	}
}

// A failed Delete is reported and the others are still made.
func TestDeleteKeysFallbackFailure(t *testing.T) {
	inner := mem.New(nil)
	keys := []string{"a", "b", "c", "d", "e"}
	seedKeys(t, inner, keys...)
	err := blob.DeleteKeys(t.Context(), &slowDeletes{Store: inner, fail: "c"}, keys)
	if want := `deleting "c": delete "c": injected delete failure`; err == nil || err.Error() != want || !errors.Is(err, errDeleteFailed) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if got, want := storeKeys(t, inner), []string{"c"}; !slices.Equal(got, want) {
		t.Errorf("left %v, want %v", got, want)
	}
}

// batcher is a BatchDeleter that records its calls; with unsupported it
// refuses like a wrapper over a store without the capability.
type batcher struct {
	blob.Store
	unsupported bool
	batches     [][]string
}

func (b *batcher) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	if b.unsupported {
		return nil, errors.ErrUnsupported
	}
	b.batches = append(b.batches, blob.Keys(infos))
	errs := make([]error, len(infos))
	for i, info := range infos {
		if err := b.Store.Delete(ctx, info.Key, blob.Cond{IfVersion: info.Version}); err != nil && !errors.Is(err, blob.ErrNotExist) {
			errs[i] = err
		}
	}
	return errs, nil
}

// A store's BatchDeleter is used when it has one; ErrUnsupported falls back.
func TestDeleteKeysCapability(t *testing.T) {
	for _, unsupported := range []bool{false, true} {
		inner := mem.New(nil)
		seedKeys(t, inner, "a", "b", "keep")
		b := &batcher{Store: inner, unsupported: unsupported}
		if err := blob.DeleteKeys(t.Context(), b, []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
		if got, want := storeKeys(t, inner), []string{"keep"}; !slices.Equal(got, want) {
			t.Errorf("unsupported=%v: left %v, want %v", unsupported, got, want)
		}
		if want := map[bool]int{false: 1, true: 0}[unsupported]; len(b.batches) != want {
			t.Errorf("unsupported=%v: %d batches, want %d", unsupported, len(b.batches), want)
		}
	}
	if err := blob.DeleteKeys(t.Context(), mem.New(nil), []string{"ok", "/bad"}); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("an invalid key: %v, want ErrInvalidKey", err)
	}
}

// Once ctx is done, the fallback starts no more deletes: DeleteBatch gives
// each element not started ctx's error, and DeleteKeys reports it once.
func TestDeleteBatchCancelled(t *testing.T) {
	inner := mem.New(nil)
	seedKeys(t, inner, "a", "b", "c")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := &slowDeletes{Store: inner}
	errs, err := blob.DeleteBatch(ctx, s, []blob.Info{{Key: "a"}, {Key: "b", Version: "v"}})
	if err != nil || len(errs) != 2 || !errors.Is(errs[0], context.Canceled) || !errors.Is(errs[1], context.Canceled) {
		t.Errorf("DeleteBatch with a done ctx = %v, %v; want context.Canceled for each element", errs, err)
	}
	if err := blob.DeleteKeys(ctx, s, []string{"a", "b", "c"}); err == nil || err.Error() != "context canceled" {
		t.Errorf("DeleteKeys with a done ctx = %v, want context canceled (once)", err)
	}
	if got, want := storeKeys(t, inner), []string{"a", "b", "c"}; s.calls != 0 || !slices.Equal(got, want) {
		t.Errorf("%d Deletes, left %v; want none and %v", s.calls, got, want)
	}
}
