package gcs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/iterator"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/objmeta"
)

// Options configures Open. The zero value uses Application Default
// Credentials against Google Cloud Storage, or the emulator that
// STORAGE_EMULATOR_HOST names.
type Options struct {
	// Client is the client to use, as configured by the caller
	// (credentials, endpoint, retry policy, transport); it must come from
	// storage.NewClient (the JSON API; gRPC clients are not supported) and
	// Endpoint must then be empty. The store never closes it. Nil means
	// Open creates a client, which the store's Close closes.
	Client *storage.Client

	// Endpoint is the base URL of a server speaking the GCS JSON API, such
	// as an emulator (http://127.0.0.1:4443) or a private endpoint. When
	// the URL has no path, /storage/v1/ is added. An http:// endpoint is
	// sent no credentials. Empty means the STORAGE_EMULATOR_HOST server
	// when that variable is set, and Google's endpoint otherwise.
	Endpoint string

	// Timeout is the deadline of each storage call (see blob.WithTimeout):
	// a call the server has not answered by then fails with
	// blob.ErrTimeout. Zero means blob.DefaultTimeout (30s). The URL
	// parameter timeout= sets it.
	Timeout time.Duration
}

// metaWriteID is the custom metadata key holding the random id of the Put
// that wrote the object.
const metaWriteID = "cloudmem-write"

// pageSize is the most objects one list request returns.
const pageSize = 1000

// listAttrs are the only object attributes a listing asks for.
var listAttrs = []string{"Name", "Size", "Generation", "Updated"}

// errClosed is returned by every call after Close.
var errClosed = fmt.Errorf("gcs: store is closed: %w", net.ErrClosed)

// store is the blob.Store Open returns, plus Close.
type store struct {
	client *storage.Client
	bucket *storage.BucketHandle
	dir    string // the name prefix with a trailing '/', or ""
	owned  bool   // the client was created by Open and is closed by Close

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	copyMode copyProbe // whether rewrites honour their conditions (copy.go)
}

var _ io.Closer = (*store)(nil)

// Open returns a store over the objects of bucket under prefix: store key k
// is object name prefix+"/"+k (k itself when prefix is empty). prefix may
// have leading and trailing slashes, which are ignored; otherwise it must be
// empty or a valid blob key. A nil opts means the zero Options.
//
// Open makes no request, but creating a client looks for credentials: it
// fails when none are found and no emulator is configured. A missing bucket
// or a permission problem shows in the first call.
//
// The store is safe for concurrent use. It implements io.Closer: Close
// releases the client Open created (a client passed in Options.Client is
// left to its owner) and must be the store's last call; calls after Close
// fail with an error wrapping net.ErrClosed.
func Open(ctx context.Context, bucket, prefix string, opts *Options) (blob.Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	if bucket == "" || strings.ContainsAny(bucket, "/?#") {
		return nil, fmt.Errorf("gcs: invalid bucket name %q", bucket)
	}
	prefix = strings.Trim(prefix, "/")
	dir := ""
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("gcs: prefix: %w", err)
		}
		dir = prefix + "/"
	}
	client, owned := opts.Client, false
	if client == nil {
		var err error
		if client, err = newClient(ctx, opts); err != nil {
			return nil, err
		}
		owned = true
	} else if opts.Endpoint != "" {
		return nil, errors.New("gcs: Options.Client is set: leave Endpoint empty and configure the client instead")
	}
	return blob.WithTimeout(&store{client: client, bucket: client.Bucket(bucket), dir: dir, owned: owned}, opts.Timeout), nil
}

// Close marks the store closed and releases the client Open created. See
// Open.
func (s *store) Close() error {
	s.closed.Store(true)
	s.closeOnce.Do(func() {
		if s.owned {
			s.closeErr = s.client.Close()
		}
	})
	return s.closeErr
}

var _ blob.TraitsReporter = (*store)(nil)

// Traits implements blob.TraitsReporter: keys are stored after the
// store's prefix, within the server's 1,024 bytes.
func (s *store) Traits() blob.Traits { return blob.Traits{KeyBudget: blob.MaxKeyLen - len(s.dir)} }

// object checks ctx and key and returns the key's object handle.
func (s *store) object(ctx context.Context, key string) (*storage.ObjectHandle, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.closed.Load() {
		return nil, errClosed
	}
	if err := blob.CheckKey(key); err != nil {
		return nil, err
	}
	if len(key) > blob.KeyBytes(s) {
		return nil, fmt.Errorf("%w: %d bytes with the store prefix, over %d", blob.ErrInvalidKey, len(s.dir)+len(key), blob.MaxKeyLen)
	}
	return s.bucket.Object(s.dir + key), nil
}

func (s *store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	obj, err := s.object(ctx, key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	if err := blob.CheckLimit(limit); err != nil {
		return nil, blob.Info{}, err
	}
	r, err := obj.NewReader(ctx)
	if err != nil {
		return nil, blob.Info{}, mapErr(key, err)
	}
	defer r.Close()
	data, err := blob.ReadLimited(r, key, r.Attrs.Size, limit)
	if errors.Is(err, blob.ErrTooLarge) {
		return nil, blob.Info{}, err
	}
	if err != nil {
		return nil, blob.Info{}, fmt.Errorf("gcs: %q: reading: %w", key, err)
	}
	return data, blob.Info{
		Key:      key,
		Size:     int64(len(data)),
		Version:  formatVersion(r.Attrs.Generation),
		Modified: r.Attrs.LastModified,
	}, nil
}

func (s *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	obj, err := s.object(ctx, key)
	if err != nil {
		return blob.Info{}, err
	}
	attrs, err := obj.Attrs(ctx)
	if err != nil {
		return blob.Info{}, mapErr(key, err)
	}
	return newInfo(key, attrs), nil
}

// Put writes data with a fresh write id (see Guarantees).
func (s *store) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	obj, err := s.object(ctx, key)
	if err != nil {
		return blob.Info{}, err
	}
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	target := obj
	var gen int64 // the generation an IfVersion write is conditioned on
	switch {
	case c.IfAbsent:
		target = obj.If(storage.Conditions{DoesNotExist: true})
	case c.IfVersion != "":
		var ok bool
		if gen, ok = parseVersion(c.IfVersion); !ok {
			return blob.Info{}, fmt.Errorf("gcs: %q: %w: %q is no version of this store", key, blob.ErrPrecondition, c.IfVersion)
		}
		target = obj.If(storage.Conditions{GenerationMatch: gen})
	}
	id := objmeta.NewWriteID()
	if !c.IfAbsent && c.IfVersion == "" {
		attrs, err := write(ctx, target, data, id)
		if err != nil {
			return blob.Info{}, mapErr(key, err)
		}
		return newInfo(key, attrs), nil
	}
	return s.putConditional(ctx, key, obj, target.Retryer(storage.WithPolicy(storage.RetryNever)), data, id, c.IfAbsent, gen)
}

// condAttempts is how many times putConditional sends a conditional write
// whose earlier attempts failed in transit and provably did not land.
const condAttempts = 4

// putConditional makes a conditional write of data to target (obj with its
// condition, and with the library's retries off), retrying it itself.
//
// The library's own retries cannot be told apart from a rival: when an
// attempt landed but its answer was lost, and a rival's write landed on top
// of it before the library's retry, that retry fails its condition and the
// object holds the rival's write id, which looks like a plain conflict; the
// caller would then apply its change again over content that holds it
// (docs/netfaults.md, the long run). So after an attempt fails in transit,
// the store reads the object: its own write id means the write landed; the
// object still in the state the condition asks for (absent, or at
// generation gen) means it did not, and the write is sent again; anything
// else means the outcome is unknown, which is what the caller is told. A
// failed condition is a conflict (blob.ErrPrecondition) only on the first
// attempt, or when the store's own write is not there.
func (s *store) putConditional(ctx context.Context, key string, obj, target *storage.ObjectHandle, data []byte, id string, ifAbsent bool, gen int64) (blob.Info, error) {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		attrs, err := write(ctx, target, data, id)
		if err == nil {
			return newInfo(key, attrs), nil
		}
		precondition := isPrecondition(err)
		if !precondition && (!transient(err) || ctx.Err() != nil) {
			return blob.Info{}, mapErr(key, err) // refused, or not sent again: nothing landed or nothing more to do
		}
		cur, aerr := obj.Attrs(ctx)
		missing := errors.Is(aerr, storage.ErrObjectNotExist)
		switch {
		case aerr == nil && cur.Metadata[metaWriteID] == id:
			return newInfo(key, cur), nil // an attempt landed
		case aerr != nil && !missing:
			return blob.Info{}, fmt.Errorf("gcs: %q: the write's outcome is unknown (it failed and the check of the object failed too): %w", key, mapErr(key, aerr))
		case precondition && attempt == 1:
			return blob.Info{}, mapErr(key, err) // no earlier attempt: a plain conflict
		case precondition:
			return blob.Info{}, fmt.Errorf("gcs: %q: the write's outcome is unknown (an attempt failed in transit, then its condition failed): %w", key, mapErr(key, err))
		}
		untouched := ifAbsent && missing || !ifAbsent && aerr == nil && cur.Generation == gen
		if !untouched {
			return blob.Info{}, fmt.Errorf("gcs: %q: the write's outcome is unknown (it failed in transit and the object changed meanwhile): %w", key, mapErr(key, err))
		}
		if attempt == condAttempts {
			return blob.Info{}, mapErr(key, err) // the last read showed it not landed, but the attempt may still be in transit: a failure, never a conflict
		}
		select {
		case <-ctx.Done():
			return blob.Info{}, mapErr(key, err)
		case <-time.After(backoff):
		}
		backoff *= 2
	}
}

// write uploads data to obj in one request, with the write id in its
// metadata, and returns the new object's attributes.
func write(ctx context.Context, obj *storage.ObjectHandle, data []byte, id string) (*storage.ObjectAttrs, error) {
	w := obj.NewWriter(ctx)
	// A chunk larger than the data makes a single-request upload; a
	// non-zero chunk size keeps the data buffered so that the library can
	// retry it (the library rounds it up to a multiple of 256 KiB).
	w.ChunkSize = len(data) + 1
	w.ContentType = objmeta.ContentType(data)
	w.Metadata = map[string]string{metaWriteID: id}
	if _, err := w.Write(data); err != nil {
		_ = w.Close() // reports the same failure
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return w.Attrs(), nil
}

// Delete deletes the pinned generation for IfVersion (see Guarantees).
func (s *store) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := blob.CheckDelete(ctx, key, c); err != nil {
		return err
	}
	obj, err := s.object(ctx, key)
	if err != nil {
		return err
	}
	switch {
	case c.IfVersion != "":
		gen, ok := parseVersion(c.IfVersion)
		if !ok {
			return fmt.Errorf("gcs: %q: %w: %q is no version of this store", key, blob.ErrPrecondition, c.IfVersion)
		}
		err := obj.Generation(gen).If(storage.Conditions{GenerationMatch: gen}).Delete(ctx)
		if err == nil || !errors.Is(err, storage.ErrObjectNotExist) {
			return wrapErr(key, err)
		}
		// The pinned generation is not live: the object was rewritten,
		// or deleted (possibly by this very call, when the library
		// retried a delete whose first attempt landed).
		if _, serr := obj.Attrs(ctx); serr != nil && !errors.Is(serr, storage.ErrObjectNotExist) {
			return mapErr(key, serr)
		} else if serr == nil {
			return fmt.Errorf("gcs: %q: %w: generation %d is not the live one: %w", key, blob.ErrPrecondition, gen, err)
		}
		return mapErr(key, err)
	}
	return wrapErr(key, obj.Delete(ctx))
}

func (s *store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(blob.Info{}, err)
			return
		}
		if s.closed.Load() {
			yield(blob.Info{}, errClosed)
			return
		}
		if err := blob.CheckPrefix(prefix); err != nil {
			yield(blob.Info{}, err)
			return
		}
		q := &storage.Query{Prefix: s.dir + prefix}
		if err := q.SetAttrSelection(listAttrs); err != nil {
			yield(blob.Info{}, fmt.Errorf("gcs: %w", err))
			return
		}
		it := s.bucket.Objects(ctx, q)
		it.PageInfo().MaxSize = pageSize
		for {
			attrs, err := it.Next()
			if errors.Is(err, iterator.Done) {
				return
			}
			if err != nil {
				yield(blob.Info{}, mapErr(prefix, err))
				return
			}
			key, ok := strings.CutPrefix(attrs.Name, s.dir)
			if !ok || blob.CheckKey(key) != nil {
				continue // not reachable through this store
			}
			if !yield(newInfo(key, attrs), nil) {
				return
			}
		}
	}
}

// newInfo builds the Info of key from its object's attributes.
func newInfo(key string, attrs *storage.ObjectAttrs) blob.Info {
	return blob.Info{Key: key, Size: attrs.Size, Version: formatVersion(attrs.Generation), Modified: attrs.Updated}
}

// formatVersion turns a generation into a version.
func formatVersion(gen int64) string { return strconv.FormatInt(gen, 10) }

// parseVersion turns a version into a generation; ok is false when v is
// not a version this store hands out (generations are positive).
func parseVersion(v string) (gen int64, ok bool) {
	gen, err := strconv.ParseInt(v, 10, 64)
	return gen, err == nil && gen > 0 && formatVersion(gen) == v
}
