package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/objmeta"
)

// pageSize is the most keys ListObjectsV2 returns and DeleteObjects takes.
const pageSize = 1000

// Options configures Open. The zero value uses the SDK's default
// configuration chain against AWS.
type Options struct {
	// Client is the S3 client to use, as configured by the caller. Nil
	// means a client built from the SDK's default configuration chain and
	// the fields below, which must be empty when Client is set.
	Client *awss3.Client

	// Region is the bucket's region. Empty means the SDK's chain
	// (AWS_REGION, the shared config file), then us-east-1 when Endpoint
	// is set; with neither, Open fails.
	Region string

	// Endpoint is the base URL (http or https) of an S3-compatible server.
	// Empty means AWS.
	Endpoint string

	// PathStyle addresses the bucket in the URL path instead of the host
	// name. MinIO needs it. False means virtual-hosted style.
	PathStyle bool

	// Timeout is the deadline of each storage call (see blob.WithTimeout):
	// a call the server has not answered by then fails with
	// blob.ErrTimeout. Zero means blob.DefaultTimeout (30s). The URL
	// parameter timeout= sets it.
	Timeout time.Duration
}

// Open returns a store over the objects of bucket under prefix: store key k
// is object key prefix+"/"+k (k itself when prefix is empty). prefix may
// have leading and trailing slashes, which are ignored; otherwise it must
// be empty or a valid blob key. A nil opts means the zero Options.
//
// Open makes no request: a missing bucket or a credential problem shows in
// the first call. The store is safe for concurrent use.
func Open(ctx context.Context, bucket, prefix string, opts *Options) (blob.Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	if bucket == "" || strings.ContainsAny(bucket, "/?#") {
		return nil, fmt.Errorf("s3: invalid bucket name %q", bucket)
	}
	prefix = strings.Trim(prefix, "/")
	dir := ""
	if prefix != "" {
		if err := blob.CheckKey(prefix); err != nil {
			return nil, fmt.Errorf("s3: prefix: %w", err)
		}
		dir = prefix + "/"
	}
	client := opts.Client
	if client == nil {
		var err error
		if client, err = newClient(ctx, opts); err != nil {
			return nil, err
		}
	} else if opts.Region != "" || opts.Endpoint != "" || opts.PathStyle {
		return nil, errors.New("s3: Options.Client is set: leave Region, Endpoint and PathStyle empty and configure the client instead")
	}
	st := &store{bucket: bucket, dir: dir}
	st.client = st.watch(client) // learns whether the server is MinIO (minio.go)
	return blob.WithTimeout(st, opts.Timeout), nil
}

// store implements blob.Store and blob.Tree.
type store struct {
	client *awss3.Client
	bucket string
	dir    string // the key prefix with a trailing '/', or ""

	serverWatch // is the server MinIO? (minio.go)

	copyMode copyProbe // whether CopyObject honours If-None-Match (copy.go)
}

var _ blob.TraitsReporter = (*store)(nil)

// Traits implements blob.TraitsReporter: keys are stored after the
// store's prefix, within the server's 1,024 bytes, a MinIO server's
// listings hide keys under objects (minio.go), and Delete reads before it
// deletes, so two racing Deletes of one key may both succeed.
func (s *store) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen - len(s.dir), HidesUnderObjects: s.isMinIO(), DeletesMayRepeat: true}
}

// objectKey checks key and returns its object key.
func (s *store) objectKey(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := blob.CheckKey(key); err != nil {
		return "", err
	}
	if len(key) > blob.KeyBytes(s) {
		return "", fmt.Errorf("%w: %d bytes with the store prefix, over %d", blob.ErrInvalidKey, len(s.dir)+len(key), blob.MaxKeyLen)
	}
	return s.dir + key, nil
}

func (s *store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	k, err := s.objectKey(ctx, key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	if err := blob.CheckLimit(limit); err != nil {
		return nil, blob.Info{}, err
	}
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return nil, blob.Info{}, mapErr(key, err)
	}
	defer out.Body.Close()
	data, err := blob.ReadLimited(out.Body, key, aws.ToInt64(out.ContentLength), limit)
	if errors.Is(err, blob.ErrTooLarge) {
		return nil, blob.Info{}, err
	}
	if err != nil {
		return nil, blob.Info{}, fmt.Errorf("s3: %q: reading: %w", key, err)
	}
	return data, newInfo(key, int64(len(data)), out.ETag, out.Metadata, out.LastModified), nil
}

func (s *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	k, err := s.objectKey(ctx, key)
	if err != nil {
		return blob.Info{}, err
	}
	return s.head(ctx, key, k)
}

// head returns the Info of object k (store key key).
func (s *store) head(ctx context.Context, key, k string) (blob.Info, error) {
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return blob.Info{}, mapErr(key, err)
	}
	return newInfo(key, aws.ToInt64(out.ContentLength), out.ETag, out.Metadata, out.LastModified), nil
}

// Put writes data with a fresh write id. Its Info has a zero Modified: S3
// does not return the time of a write.
func (s *store) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	k, err := s.objectKey(ctx, key)
	if err != nil {
		return blob.Info{}, err
	}
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	id := objmeta.NewWriteID()
	in := &awss3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &k,
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String(objmeta.ContentType(data)),
		Metadata:      map[string]string{metaWriteID: id},
	}
	switch {
	case c.IfAbsent:
		in.IfNoneMatch = aws.String("*")
	case c.IfVersion != "":
		etag, _ := splitVersion(c.IfVersion)
		in.IfMatch = aws.String(quoteETag(etag))
	default:
		out, err := s.put(ctx, in, data)
		if err != nil {
			return blob.Info{}, mapErr(key, err)
		}
		return blob.Info{Key: key, Size: int64(len(data)), Version: joinVersion(aws.ToString(out.ETag), id)}, nil
	}
	return s.putConditional(ctx, key, k, in, data, id, c)
}

// condAttempts is how many times putConditional sends a conditional write
// whose earlier attempts failed in transit and provably did not land.
const condAttempts = 4

// putConditional sends the conditional write in, with the SDK's retries
// off, and sends it again itself.
//
// The SDK's own retries cannot be told apart from a rival: when an attempt
// landed but its answer was lost, and a rival's write landed on top of it
// before the SDK's retry, that retry fails its condition and the object
// holds the rival's write id, which looks like a plain conflict; the caller
// would then apply its change again over content that holds it
// (docs/netfaults.md, the long run). So after an attempt fails in transit,
// the store reads the object: its own write id means the write landed; the
// object still in the state the condition asks for (absent, or at the
// version c names) means it did not, and the write is sent again; anything
// else means the outcome is unknown, which is what the caller is told. A
// failed condition is a conflict (blob.ErrPrecondition) only on the first
// attempt, or when the store's own write is not there.
func (s *store) putConditional(ctx context.Context, key, k string, in *awss3.PutObjectInput, data []byte, id string, c blob.Cond) (blob.Info, error) {
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		out, err := s.put(ctx, in, data, noRetries)
		if err == nil {
			return blob.Info{Key: key, Size: int64(len(data)), Version: joinVersion(aws.ToString(out.ETag), id)}, nil
		}
		// A failed condition: 412, a 404 for IfVersion on a missing key, or
		// a second 409.
		failed := classify(err) != nil || isConflict(err)
		if !failed && (!transient(err) || ctx.Err() != nil) {
			return blob.Info{}, mapErr(key, err)
		}
		info, herr := s.head(ctx, key, k)
		missing := errors.Is(herr, blob.ErrNotExist)
		switch {
		case herr == nil && writeIDOf(info.Version) == id:
			return info, nil // an attempt landed
		case herr != nil && !missing:
			return blob.Info{}, fmt.Errorf("s3: %q: the write's outcome is unknown (it failed and the check of the object failed too): %w", key, herr)
		case failed && attempt == 1:
			return blob.Info{}, fmt.Errorf("s3: %q: %w: %w", key, blob.ErrPrecondition, err) // a plain conflict
		case failed:
			return blob.Info{}, fmt.Errorf("s3: %q: the write's outcome is unknown (an attempt failed in transit, then its condition failed): %w", key, err)
		}
		untouched := c.IfAbsent && missing || c.IfVersion != "" && herr == nil && versionMatches(c.IfVersion, info.Version)
		if !untouched {
			return blob.Info{}, fmt.Errorf("s3: %q: the write's outcome is unknown (it failed in transit and the object changed meanwhile): %w", key, err)
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

// noRetries turns the SDK's retries off for one request.
func noRetries(o *awss3.Options) { o.Retryer = aws.NopRetryer{} }

// transient reports whether a request that failed this way may be sent
// again (the SDK's rule for its own retries).
func transient(err error) bool {
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// put sends in with data as its body, retrying once on 409
// ConditionalRequestConflict (a conditional write racing another one).
func (s *store) put(ctx context.Context, in *awss3.PutObjectInput, data []byte, opts ...func(*awss3.Options)) (*awss3.PutObjectOutput, error) {
	in.Body = bytes.NewReader(data)
	out, err := s.client.PutObject(ctx, in, opts...)
	if isConflict(err) {
		in.Body = bytes.NewReader(data)
		out, err = s.client.PutObject(ctx, in, opts...)
	}
	return out, err
}

// Delete reads the object's version first: S3 deletes a missing key without
// complaint, and MinIO ignores If-Match on DeleteObject (see Guarantees).
func (s *store) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := blob.CheckDelete(ctx, key, c); err != nil {
		return err
	}
	k, err := s.objectKey(ctx, key)
	if err != nil {
		return err
	}
	cur, err := s.head(ctx, key, k)
	if err != nil {
		return err
	}
	in := &awss3.DeleteObjectInput{Bucket: &s.bucket, Key: &k}
	if c.IfVersion != "" {
		if !versionMatches(c.IfVersion, cur.Version) {
			return fmt.Errorf("s3: %q: %w: version %q is not the current one", key, blob.ErrPrecondition, c.IfVersion)
		}
		etag, _ := splitVersion(cur.Version)
		in.IfMatch = aws.String(quoteETag(etag))
	}
	_, err = s.client.DeleteObject(ctx, in)
	if isConflict(err) {
		_, err = s.client.DeleteObject(ctx, in)
	}
	if err != nil {
		if isConflict(err) {
			return fmt.Errorf("s3: %q: %w: %w", key, blob.ErrPrecondition, err)
		}
		return mapErr(key, err)
	}
	return nil
}

func (s *store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return blob.CheckedList(ctx, prefix, func(yield func(blob.Info, error) bool) {
		for obj, err := range s.objects(ctx, prefix) {
			if err != nil {
				yield(blob.Info{}, err)
				return
			}
			key := strings.TrimPrefix(aws.ToString(obj.Key), s.dir)
			if !yield(newInfo(key, aws.ToInt64(obj.Size), obj.ETag, nil, obj.LastModified), nil) {
				return
			}
		}
	})
}

// objects yields the objects whose store keys start with prefix and are
// valid keys, in key order, a ListObjectsV2 page at a time, each with its
// key decoded. It stops after yielding an error.
//
// The listing asks for URL-encoded keys (EncodingType=url): S3 answers in
// XML 1.0, which cannot carry most control characters, so one object
// named with one (put there by another program) would otherwise make
// every listing of the prefix fail to decode. Such a key is not a valid
// store key and is skipped, like any other.
func (s *store) objects(ctx context.Context, prefix string) iter.Seq2[types.Object, error] {
	return func(yield func(types.Object, error) bool) {
		in := &awss3.ListObjectsV2Input{Bucket: &s.bucket, MaxKeys: aws.Int32(pageSize), EncodingType: types.EncodingTypeUrl}
		if p := s.dir + prefix; p != "" {
			in.Prefix = aws.String(p)
		}
		pages := awss3.NewListObjectsV2Paginator(s.client, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				yield(types.Object{}, fmt.Errorf("s3: listing %q: %w", prefix, err))
				return
			}
			for _, obj := range page.Contents {
				name, err := url.QueryUnescape(aws.ToString(obj.Key))
				if err != nil {
					continue // not URL-encoded as asked: no key of ours
				}
				key, ok := strings.CutPrefix(name, s.dir)
				if !ok || blob.CheckKey(key) != nil {
					continue // not reachable through this store
				}
				obj.Key = &name
				if !yield(obj, nil) {
					return
				}
			}
		}
	}
}

// newInfo builds an Info from an object's attributes; meta may be nil.
// Modified is LastModified in whole seconds: a HEAD or GET gives it so (an
// HTTP date), a listing to the millisecond on some servers (MinIO), and a
// time that differed between a Stat and a List would let an object expire
// for one and not for the other (blob.WithExpiry).
func newInfo(key string, size int64, etag *string, meta map[string]string, modified *time.Time) blob.Info {
	return blob.Info{
		Key:      key,
		Size:     size,
		Version:  joinVersion(aws.ToString(etag), metaValue(meta, metaWriteID)),
		Modified: aws.ToTime(modified).Truncate(time.Second),
	}
}
