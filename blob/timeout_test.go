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
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

func TestSuiteTimeout(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.WithTimeout(mem.New(nil), time.Minute) })
}

func TestSuiteTimeoutOverPlainWrapper(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return blob.WithTimeout(plain{mem.New(nil)}, time.Minute) })
}

// stuck is a store whose every call waits for its context to end.
type stuck struct{ blob.Store }

func (stuck) Get(ctx context.Context, _ string, _ int64) ([]byte, blob.Info, error) {
	<-ctx.Done()
	return nil, blob.Info{}, ctx.Err()
}

func TestTimeoutError(t *testing.T) {
	s := blob.WithTimeout(stuck{mem.New(nil)}, 50*time.Millisecond)
	start := time.Now()
	_, _, err := s.Get(t.Context(), "k", 10)
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("Get took %v with a 50ms timeout", elapsed)
	}
	var te *blob.TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, blob.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get = %v, want a *blob.TimeoutError", err)
	}
	if got, want := te.ModelCause(), "the storage call timed out after 50ms"; got != want {
		t.Fatalf("ModelCause = %q, want %q", got, want)
	}
	if got, want := err.Error(), `blob: get "k": no answer from storage within 50ms: context deadline exceeded`; got != want {
		t.Fatalf("Error = %q, want %q", got, want)
	}

	// The caller's own cancellation is not a timeout.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := s.Get(ctx, "k", 10); !errors.Is(err, context.Canceled) || errors.Is(err, blob.ErrTimeout) {
		t.Fatalf("Get with a cancelled context = %v, want context.Canceled and no timeout", err)
	}
}

// pausedDeletes is a store without Tree whose every Delete takes
// pause (or until its context ends).
type pausedDeletes struct {
	plain
	pause time.Duration
}

func (s pausedDeletes) Delete(ctx context.Context, key string, c blob.Cond) error {
	select {
	case <-time.After(s.pause):
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.plain.Delete(ctx, key, c)
}

// putTree writes n objects under dir.
func putTree(t *testing.T, s blob.Store, dir string, n int) []string {
	t.Helper()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/k%04d", dir, i)
		if _, err := s.Put(t.Context(), keys[i], []byte("x"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// The deadline bounds each request a tree delete makes, not the whole
// tree: 30 rounds of 16 parallel 50ms deletes take 1.5s, more than the
// store's 1s deadline, and every one of them is within it.
func TestTimeoutDeleteTreePerRequest(t *testing.T) {
	inner := mem.New(nil)
	const deadline = time.Second
	s := blob.WithTimeout(pausedDeletes{plain{inner}, 50 * time.Millisecond}, deadline)
	putTree(t, inner, "d", 30*blob.DeleteParallel)
	start := time.Now()
	if err := blob.DeleteTree(t.Context(), s, "d"); err != nil {
		t.Fatalf("DeleteTree: %v", err)
	}
	if elapsed := time.Since(start); elapsed <= deadline {
		t.Fatalf("test bug: the tree delete took %v, within the %v deadline, so it proves nothing", elapsed, deadline)
	}
	if left, err := blob.ListAll(t.Context(), inner, ""); err != nil || len(left) != 0 {
		t.Fatalf("after DeleteTree: %d objects left, error %v", len(left), err)
	}

	// A request that never answers still ends the tree delete.
	putTree(t, inner, "e", 3)
	stalled := blob.WithTimeout(pausedDeletes{plain{inner}, time.Hour}, 50*time.Millisecond)
	if err := blob.DeleteTree(t.Context(), stalled, "e"); !errors.Is(err, blob.ErrTimeout) {
		t.Fatalf("DeleteTree with stalled deletes = %v, want ErrTimeout", err)
	}
}

// batchRecorder is a BatchDeleter (deleting one object at a time through
// its plain store) that takes pause per call and records how many objects
// each call got.
type batchRecorder struct {
	plain
	pause        time.Duration
	declineBelow int // fewer objects than this get errors.ErrUnsupported, as S3 declines fewer than 4
	mu           sync.Mutex
	calls        []int
}

func (b *batchRecorder) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	b.mu.Lock()
	b.calls = append(b.calls, len(infos))
	b.mu.Unlock()
	if len(infos) < b.declineBelow {
		return nil, errors.ErrUnsupported
	}
	select {
	case <-time.After(b.pause):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The deletes themselves are not what the deadline is tested on: a
	// call of DeleteParallel*BatchKeys deletes may outlast it under -race.
	return blob.DeleteBatch(context.WithoutCancel(ctx), b.plain, infos)
}

// A BatchDeleter gets DeleteParallel*BatchKeys keys a call, each call under
// its own deadline: three 400ms calls outlast the 1s deadline together.
// (DeleteKeys, not DeleteTree: listing this many keys may itself outlast
// the deadline under -race.)
func TestTimeoutDeleteBatchPerCall(t *testing.T) {
	inner := mem.New(nil)
	const deadline = time.Second
	const chunk = blob.DeleteParallel * blob.BatchKeys
	rec := &batchRecorder{plain: plain{inner}, pause: 400 * time.Millisecond}
	s := blob.WithTimeout(rec, deadline)
	keys := putTree(t, inner, "d", 2*chunk+500)
	start := time.Now()
	if err := blob.DeleteKeys(t.Context(), s, keys); err != nil {
		t.Fatalf("DeleteKeys: %v", err)
	}
	if elapsed := time.Since(start); elapsed <= deadline {
		t.Fatalf("test bug: the batches took %v, within the %v deadline, so it proves nothing", elapsed, deadline)
	}
	if want := []int{chunk, chunk, 500}; !slices.Equal(rec.calls, want) {
		t.Fatalf("DeleteBatch calls named %v keys, want %v", rec.calls, want)
	}
	if left, err := blob.ListAll(t.Context(), inner, ""); err != nil || len(left) != 0 {
		t.Fatalf("after deleting %d keys: %d objects left, error %v", len(keys), len(left), err)
	}
}

// A part the BatchDeleter declines after the first (S3 declines a few
// keys) is deleted one object at a time, not failed.
func TestTimeoutDeleteBatchDeclinedPart(t *testing.T) {
	inner := mem.New(nil)
	rec := &batchRecorder{plain: plain{inner}, declineBelow: 4}
	s := blob.WithTimeout(rec, time.Minute)
	const chunk = blob.DeleteParallel * blob.BatchKeys
	putTree(t, inner, "d", chunk+2)
	infos, err := blob.ListAll(t.Context(), inner, "d/")
	if err != nil {
		t.Fatal(err)
	}
	errs, err := blob.DeleteBatch(t.Context(), s, infos)
	if err != nil {
		t.Fatalf("DeleteBatch: %v", err)
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: error %v, want nil", infos[i].Key, err)
		}
	}
	// The declined part of 2 was offered once, then deleted one by one.
	if want := []int{chunk, 2}; !slices.Equal(rec.calls, want) {
		t.Errorf("DeleteBatch calls got %v objects, want %v", rec.calls, want)
	}
	if left, err := blob.ListAll(t.Context(), inner, ""); err != nil || len(left) != 0 {
		t.Fatalf("after DeleteBatch: %d objects left, error %v", len(left), err)
	}
}

// A BatchDeleter gets DeleteParallel*BatchKeys objects a call, and each
// object's own error comes back as it is, not as a timeout.
func TestTimeoutDeleteBatchPerChunk(t *testing.T) {
	inner := mem.New(nil)
	rec := &batchRecorder{plain: plain{inner}}
	s := blob.WithTimeout(rec, time.Minute)
	const chunk = blob.DeleteParallel * blob.BatchKeys
	putTree(t, inner, "d", chunk+2)
	infos, err := blob.ListAll(t.Context(), inner, "d/")
	if err != nil {
		t.Fatal(err)
	}
	// Three objects change after the listing, two in the first call: their
	// deletes must fail with ErrPrecondition, and only with it.
	for _, k := range []string{infos[0].Key, infos[1].Key, infos[len(infos)-1].Key} {
		if _, err := inner.Put(t.Context(), k, []byte("changed"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	errs, err := blob.DeleteBatch(t.Context(), s, infos)
	if err != nil {
		t.Fatalf("DeleteBatch: %v", err)
	}
	if want := []int{chunk, 2}; !slices.Equal(rec.calls, want) {
		t.Fatalf("DeleteBatch calls got %v objects, want %v", rec.calls, want)
	}
	for i, err := range errs {
		changed := i <= 1 || i == len(errs)-1
		switch {
		case changed && (!errors.Is(err, blob.ErrPrecondition) || errors.Is(err, blob.ErrTimeout)):
			t.Errorf("changed %s: error %v, want ErrPrecondition and no timeout", infos[i].Key, err)
		case !changed && err != nil:
			t.Errorf("%s: error %v, want nil", infos[i].Key, err)
		}
	}
	left, err := blob.ListAll(t.Context(), inner, "")
	if err != nil || len(left) != 3 {
		t.Fatalf("after DeleteBatch: %d objects left (want the 3 changed ones), error %v", len(left), err)
	}
}
