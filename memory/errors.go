package memory

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// Causer is implemented by errors that can describe themselves to the model
// in a few words that name no credentials, host paths, bucket names or
// internal keys, for example "an object could not be decrypted".
//
// When a storage call fails, the model reads "The memory storage failed: "
// followed by a short cause. If the error, or any error it wraps (as
// errors.As finds it), is a Causer with a non-empty ModelCause, that text is
// the cause; otherwise the handler picks a fixed text from the error's kind
// (cancelled, timed out, read-only, rejected path, any other failure). The
// full error goes only to the Handler's Logger.
type Causer interface {
	ModelCause() string
}

// modelCause returns the short, safe cause of a storage failure.
func modelCause(err error) string {
	var c Causer
	if errors.As(err, &c) {
		if cause := c.ModelCause(); cause != "" {
			return cause
		}
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "the request timed out"
	case errors.Is(err, blob.ErrReadOnly):
		return "the store is read-only"
	case errors.Is(err, blob.ErrInvalidKey):
		return "the store rejected the path"
	}
	return "the storage backend returned an error"
}

// errorResult is the Result of a failed command; msg lacks "Error: ".
func errorResult(msg string) Result {
	return Result{Text: "Error: " + msg, IsError: true}
}

// textResult is the Result of a successful command.
func textResult(text string) Result { return Result{Text: text} }

// storageFailure logs err in full, with the command and the path it was
// about (and a rename's new_path), and returns the Result the model sees,
// which holds only the short cause.
func (h *Handler) storageFailure(ctx context.Context, c *command, path string, err error) Result {
	attrs := []slog.Attr{slog.String("command", c.name), slog.String("path", path), slog.Any("error", err)}
	if c.name == "rename" {
		attrs = append(attrs, slog.String("new_path", c.newPath))
	}
	h.log.LogAttrs(ctx, slog.LevelError, "memory: storage call failed", attrs...)
	return errorResult(msgStorage(modelCause(err)))
}

// retry runs attempt until it reports no conflict with another writer,
// at most 1+h.retries times, sleeping a short, jittered, growing time
// between attempts. After the last conflict it returns the conflict message
// for path. A ctx done while waiting is a storage failure.
func (h *Handler) retry(ctx context.Context, c *command, path string, attempt func() (res Result, conflict bool)) Result {
	for n := 0; ; n++ {
		res, conflict := attempt()
		if !conflict {
			return res
		}
		if n >= h.retries {
			return errorResult(msgConflict(path))
		}
		if err := sleep(ctx, backoff(n)); err != nil {
			return h.storageFailure(ctx, c, path, err)
		}
	}
}

// backoff is the wait before retry n (0-based): a random time between half
// and all of 2ms·2ⁿ, capped at 100ms, so that racing writers spread out.
func backoff(n int) time.Duration {
	d := min(2*time.Millisecond<<min(n, 10), 100*time.Millisecond)
	return d/2 + rand.N(d/2+1)
}

// sleep waits for d or until ctx is done, and then returns ctx's error.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
