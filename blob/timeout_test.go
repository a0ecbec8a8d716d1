package blob_test

import (
	"context"
	"errors"
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
