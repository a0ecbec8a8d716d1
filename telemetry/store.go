package telemetry

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cloudmem/cloudmem/blob"
)

// Store returns a blob.Store that forwards every call to s and records a
// span (a child of the span in the call's context) and metrics for each.
// It forwards blob.Tree, blob.Tree, blob.BatchDeleter,
// blob.Copier, blob.TraitsReporter, blob.Locker (a lock is no storage
// call: it gets no span) and io.Closer to s. A Rename, DeleteTree,
// DeleteBatch or Copy that s lacks returns errors.ErrUnsupported without a
// span, as it reaches no storage (the package functions blob.Rename,
// blob.DeleteTree, blob.DeleteBatch and blob.Copy then fall back through
// the wrapper, whose core calls are recorded); one that s refuses with
// errors.ErrUnsupported (a wrapper over a store without it) ends its span
// with result "unsupported" and records no metric. The wrapper never
// changes an argument, a result or an error, and is safe for concurrent use
// when s is.
func (in *Instrumentation) Store(s blob.Store) blob.Store {
	return &store{inner: s, in: in}
}

type store struct {
	inner blob.Store
	in    *Instrumentation
}

var (
	_ blob.Tree         = (*store)(nil)
	_ blob.Locker       = (*store)(nil)
	_ blob.BatchDeleter = (*store)(nil)
	_ blob.Copier       = (*store)(nil)
	_ io.Closer         = (*store)(nil)
)

// call is one storage call being recorded.
type call struct {
	in    *Instrumentation
	op    int
	off   bool // nothing to record: no span, no metric enabled
	span  trace.Span
	start time.Time
}

// begin starts the span of a storage call; cond is a condition index.
// When neither spans nor the storage metrics are on, it records nothing
// and does not read the clock.
func (in *Instrumentation) begin(ctx context.Context, op, cond int) (context.Context, call) {
	tr := in.tracing.tracer()
	if tr == nil && !in.storageMetricsOn(ctx) {
		return ctx, call{off: true, span: noSpan}
	}
	c := call{in: in, op: op, start: time.Now()}
	ctx, c.span = start(tr, ctx, spanNames[op], in.storageStart[op][cond])
	return ctx, c
}

// storageMetricsOn reports whether any storage instrument records.
func (in *Instrumentation) storageMetricsOn(ctx context.Context) bool {
	return in.storageDuration.Enabled(ctx) || in.storageErrors.Enabled(ctx) ||
		in.bytesRead.Enabled(ctx) || in.bytesWritten.Enabled(ctx)
}

// spanNames are the storage spans' names, by operation.
var spanNames = func() (names [numOps]string) {
	for i, op := range opNames {
		names[i] = "storage " + op
	}
	return names
}()

// end records the outcome of the call: the span's result and status, the
// bytes moved (sized: whether the call moves bytes, which a read or write
// span records even when 0; written: whether they were written), and the
// metrics.
func (c call) end(ctx context.Context, err error, sized, written bool, bytes int64) {
	if c.off {
		return
	}
	in := c.in
	result, failure, cause := storageResult(err)
	if c.span.IsRecording() {
		c.span.SetAttributes(in.storageEnd[result]...)
		if sized {
			c.span.SetAttributes(keyBytes.Int64(bytes))
		}
		if failure >= 0 {
			c.span.SetAttributes(keyErrorType.String(storageErrors[failure].name))
			c.span.SetStatus(codes.Error, cause)
		}
	}
	c.span.End()
	in.storageDuration.Record(ctx, time.Since(c.start).Seconds(), in.storageRecord[c.op][result]...)
	if failure >= 0 {
		in.storageErrors.Add(ctx, 1, in.storageFailed[c.op][failure]...)
	}
	if bytes > 0 {
		counter := in.bytesRead
		if written {
			counter = in.bytesWritten
		}
		counter.Add(ctx, bytes, in.storageBytes[c.op]...)
	}
}

func (s *store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	ctx, c := s.in.begin(ctx, opGet, condAbsent)
	data, info, err := s.inner.Get(ctx, key, limit)
	c.end(ctx, err, true, false, int64(len(data)))
	return data, info, err
}

func (s *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	ctx, c := s.in.begin(ctx, opStat, condAbsent)
	info, err := s.inner.Stat(ctx, key)
	c.end(ctx, err, false, false, 0)
	return info, err
}

func (s *store) Put(ctx context.Context, key string, data []byte, cond blob.Cond) (blob.Info, error) {
	ctx, c := s.in.begin(ctx, opPut, condition(cond))
	info, err := s.inner.Put(ctx, key, data, cond)
	var n int64
	if err == nil {
		n = int64(len(data))
	}
	c.end(ctx, err, true, true, n)
	return info, err
}

func (s *store) Delete(ctx context.Context, key string, cond blob.Cond) error {
	ctx, c := s.in.begin(ctx, opDelete, condition(cond))
	err := s.inner.Delete(ctx, key, cond)
	c.end(ctx, err, false, false, 0)
	return err
}

// List records one span for the whole listing, from the first step of the
// iteration to its end, with the number of objects yielded.
func (s *store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		ctx, c := s.in.begin(ctx, opList, condAbsent)
		var n int64
		var failed error
		defer func() {
			if c.span.IsRecording() {
				c.span.SetAttributes(keyObjects.Int64(n))
			}
			c.end(ctx, failed, false, false, 0)
		}()
		for info, err := range s.inner.List(ctx, prefix) {
			if err != nil {
				failed = err
			} else {
				n++
			}
			if !yield(info, err) || err != nil {
				return
			}
		}
	}
}

func (s *store) Rename(ctx context.Context, src, dst string) error {
	r, ok := s.inner.(blob.Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	ctx, c := s.in.begin(ctx, opRename, condAbsent)
	err := r.Rename(ctx, src, dst)
	if errors.Is(err, errors.ErrUnsupported) {
		// The inner store is a wrapper over a store that cannot rename:
		// the call reached no storage; the fallback's calls are recorded.
		c.span.SetAttributes(keyStorageRes.String("unsupported"))
		c.span.End()
		return err
	}
	c.end(ctx, err, false, false, 0)
	return err
}

func (s *store) DeleteTree(ctx context.Context, dir string) error {
	d, ok := s.inner.(blob.Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	ctx, c := s.in.begin(ctx, opDeleteTree, condAbsent)
	err := d.DeleteTree(ctx, dir)
	if errors.Is(err, errors.ErrUnsupported) {
		c.span.SetAttributes(keyStorageRes.String("unsupported"))
		c.span.End()
		return err
	}
	c.end(ctx, err, false, false, 0)
	return err
}

// Copy records one span for a copy on the server.
func (s *store) Copy(ctx context.Context, src, dst, srcVersion string) (blob.Info, error) {
	cp, ok := s.inner.(blob.Copier)
	if !ok {
		return blob.Info{}, errors.ErrUnsupported
	}
	ctx, c := s.in.begin(ctx, opCopy, condIfVersion)
	info, err := cp.Copy(ctx, src, dst, srcVersion)
	if errors.Is(err, errors.ErrUnsupported) {
		c.span.SetAttributes(keyStorageRes.String("unsupported"))
		c.span.End()
		return info, err
	}
	c.end(ctx, err, false, false, 0)
	return info, err
}

// DeleteBatch records one span for the batch, with the number of objects
// and, when any element carries a version, the condition if_version; its
// result is that of the call as a whole.
func (s *store) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	d, ok := s.inner.(blob.BatchDeleter)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	cond := condAbsent
	for _, info := range infos {
		if info.Version != "" {
			cond = condIfVersion
			break
		}
	}
	ctx, c := s.in.begin(ctx, opDeleteBatch, cond)
	if c.span.IsRecording() {
		c.span.SetAttributes(keyObjects.Int(len(infos)))
	}
	errs, err := d.DeleteBatch(ctx, infos)
	if errors.Is(err, errors.ErrUnsupported) {
		c.span.SetAttributes(keyStorageRes.String("unsupported"))
		c.span.End()
		return errs, err
	}
	c.end(ctx, err, false, false, 0)
	return errs, err
}

// Lock forwards to the inner store's Locker, or returns
// errors.ErrUnsupported, which makes blob.Lock fall back.
func (s *store) Lock(ctx context.Context, key string) (func(), error) {
	l, ok := s.inner.(blob.Locker)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return l.Lock(ctx, key)
}

// Traits are the inner store's: the wrapper leaves keys as they are.
func (s *store) Traits() blob.Traits { return blob.TraitsOf(s.inner) }

// Close closes the inner store.
func (s *store) Close() error { return blob.Close(s.inner) }
