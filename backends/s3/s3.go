// Package s3 is a blob.Store over an Amazon S3 bucket or an S3-compatible
// server (MinIO, Cloudflare R2, Ceph, Wasabi), built on aws-sdk-go-v2.
//
// # URL
//
//	s3://BUCKET/PREFIX?region=R&endpoint=URL&path_style=true
//
// BUCKET is required. PREFIX (optional, any number of segments) scopes the
// store to the keys under it: store key k is object key PREFIX/k. The shared
// prefix= parameter of package storeurl is applied the same way, after the
// path prefix. The parameters are:
//
//	region=R          the bucket's region; default: the SDK's chain (AWS_REGION, shared config),
//	                  then us-east-1 when endpoint is set
//	endpoint=URL      the base URL of an S3-compatible server, e.g. http://127.0.0.1:9000
//	path_style=true   address the bucket in the path (http://host/BUCKET/key), as MinIO needs;
//	                  true, false, 1 or 0; default false (virtual-hosted style)
//
// # Credentials
//
// The store has no credential handling of its own: the SDK's default chain
// finds them (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE and
// the shared config and credentials files, SSO, web identity and IRSA, ECS
// and EC2 instance roles). A URL with a user name or password is refused.
// The store needs s3:GetObject, s3:PutObject and s3:DeleteObject on the
// objects under the prefix and s3:ListBucket on the bucket.
//
// # Versions
//
// A version is the object's ETag joined with a write id: a random 128-bit
// number that every Put stores in the object's user metadata
// (x-amz-meta-cloudmem-write), so that versions differ even when the same
// bytes are written twice (S3's ETag is a hash of the content). Get, Stat
// and Put return such versions. List returns the ETag alone, because S3's
// listing carries no user metadata; a List version is therefore not equal
// to the Stat version of the same object, but it works as Cond.IfVersion.
//
// Put(IfVersion) sends If-Match with the ETag, so S3 compares content, not
// writes: if someone rewrote the object with identical bytes since the
// version was read, the conditional Put still succeeds. No update is lost
// by that: the new bytes were computed from content identical to what is
// stored. Delete(IfVersion) also compares the write id (see Guarantees).
//
// # Guarantees
//
// Put(IfAbsent) (If-None-Match: *) and Put(IfVersion) (If-Match) are
// enforced by the server, on AWS and on MinIO: of racing conditional writers
// exactly one wins. A 409 ConditionalRequestConflict is retried once, then
// reported as blob.ErrPrecondition. When the SDK retries a conditional Put
// whose first attempt landed, the retry's 412 is recognised by the write id
// and the Put succeeds.
//
// Delete(IfVersion) first reads the object's version (which also gives
// blob.ErrNotExist for a missing key, as S3's DeleteObject does not), then
// sends DeleteObject with If-Match. AWS enforces that If-Match, so a
// conditional delete racing a write is exact there. MinIO ignores If-Match
// on DeleteObject: there a write landing between the read and the delete is
// deleted. The memory handler's correctness rests on conditional Put only.
//
// Renames are not atomic: blob.Rename copies and deletes. DeleteTree
// (blob.TreeDeleter) lists the tree and deletes it with DeleteObjects, up to
// 1,000 keys a request; it is not atomic, and reports every key S3 failed to
// delete. List pages through ListObjectsV2 (1,000 keys a page) in S3's UTF-8
// byte order, which is blob's key order. Objects whose keys are not valid
// blob keys (such as the "dir/" folder markers some consoles create) are
// invisible to List and DeleteTree.
//
// Objects are stored with content type "text/plain; charset=utf-8" when the
// data is valid UTF-8 and "application/octet-stream" otherwise. The only
// user metadata is the write id, which is random and carries nothing secret.
package s3

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloudmem/cloudmem/blob"
)

// Scheme is the URL scheme this package registers with storeurl.
const Scheme = "s3"

// defaultEndpointRegion is the region used for a custom endpoint when the
// SDK's chain finds none; S3-compatible servers accept it.
const defaultEndpointRegion = "us-east-1"

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
	return &store{client: client, bucket: bucket, dir: dir}, nil
}

// newClient builds a client from the SDK's default chain and opts.
func newClient(ctx context.Context, opts *Options) (*awss3.Client, error) {
	if opts.Endpoint != "" {
		u, err := url.Parse(opts.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("s3: endpoint %q: want http://host[:port] or https://host[:port]", redact(opts.Endpoint))
		}
	}
	var load []func(*config.LoadOptions) error
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("s3: loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		if opts.Endpoint == "" {
			return nil, errors.New("s3: no region: set region= in the URL, Options.Region or AWS_REGION")
		}
		cfg.Region = defaultEndpointRegion
	}
	return awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.UsePathStyle = opts.PathStyle
	}), nil
}

// redact drops any user information from a URL string for error messages.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = nil
		return u.String()
	}
	if strings.Contains(s, "@") {
		return "(unparsable URL)"
	}
	return s
}

// store implements blob.Store and blob.TreeDeleter.
type store struct {
	client *awss3.Client
	bucket string
	dir    string // the key prefix with a trailing '/', or ""
}

var _ blob.TreeDeleter = (*store)(nil)

// objectKey checks key and returns its object key.
func (s *store) objectKey(ctx context.Context, key string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := blob.CheckKey(key); err != nil {
		return "", err
	}
	if len(s.dir)+len(key) > blob.MaxKeyLen {
		return "", fmt.Errorf("%w: %d bytes with the store prefix, over %d", blob.ErrInvalidKey, len(s.dir)+len(key), blob.MaxKeyLen)
	}
	return s.dir + key, nil
}

func (s *store) Get(ctx context.Context, key string) ([]byte, blob.Info, error) {
	k, err := s.objectKey(ctx, key)
	if err != nil {
		return nil, blob.Info{}, err
	}
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: &s.bucket, Key: &k})
	if err != nil {
		return nil, blob.Info{}, mapErr(key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
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
	id, err := newWriteID()
	if err != nil {
		return blob.Info{}, err
	}
	in := &awss3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           &k,
		ContentLength: aws.Int64(int64(len(data))),
		ContentType:   aws.String(contentType(data)),
		Metadata:      map[string]string{metaWriteID: id},
	}
	switch {
	case c.IfAbsent:
		in.IfNoneMatch = aws.String("*")
	case c.IfVersion != "":
		etag, _ := splitVersion(c.IfVersion)
		in.IfMatch = aws.String(etag)
	}
	out, err := s.put(ctx, in, data)
	if err == nil {
		return blob.Info{Key: key, Size: int64(len(data)), Version: joinVersion(aws.ToString(out.ETag), id)}, nil
	}
	conditional := in.IfNoneMatch != nil || in.IfMatch != nil
	if sentinel := classify(err); !conditional || sentinel == nil && !isConflict(err) {
		return blob.Info{}, mapErr(key, err)
	}
	// (For IfVersion, S3 answers 404 when the key is missing: that too is
	// a failed precondition.)
	// The condition failed, or S3 says so: an SDK retry of a request
	// whose first attempt landed fails its condition against our own
	// write. The write id tells ours from a rival's.
	if info, herr := s.head(ctx, key, k); herr == nil && writeIDOf(info.Version) == id {
		return info, nil
	}
	return blob.Info{}, fmt.Errorf("s3: %q: %w: %w", key, blob.ErrPrecondition, err)
}

// put sends in with data as its body, retrying once on 409
// ConditionalRequestConflict (a conditional write racing another one).
func (s *store) put(ctx context.Context, in *awss3.PutObjectInput, data []byte) (*awss3.PutObjectOutput, error) {
	in.Body = bytes.NewReader(data)
	out, err := s.client.PutObject(ctx, in)
	if isConflict(err) {
		in.Body = bytes.NewReader(data)
		out, err = s.client.PutObject(ctx, in)
	}
	return out, err
}

// Delete reads the object's version first: S3 deletes a missing key without
// complaint, and MinIO ignores If-Match on DeleteObject (see Guarantees).
func (s *store) Delete(ctx context.Context, key string, c blob.Cond) error {
	k, err := s.objectKey(ctx, key)
	if err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	cur, err := s.head(ctx, key, k)
	if err != nil {
		return err
	}
	in := &awss3.DeleteObjectInput{Bucket: &s.bucket, Key: &k}
	switch {
	case c.IfAbsent:
		return fmt.Errorf("s3: %q: %w: the key exists", key, blob.ErrPrecondition)
	case c.IfVersion != "":
		if !versionMatches(c.IfVersion, cur.Version) {
			return fmt.Errorf("s3: %q: %w: version %q is not the current one", key, blob.ErrPrecondition, c.IfVersion)
		}
		etag, _ := splitVersion(cur.Version)
		in.IfMatch = aws.String(etag)
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
	return func(yield func(blob.Info, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(blob.Info{}, err)
			return
		}
		if err := blob.CheckPrefix(prefix); err != nil {
			yield(blob.Info{}, err)
			return
		}
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
	}
}

// objects yields the objects whose store keys start with prefix and are
// valid keys, in key order, a ListObjectsV2 page at a time. It stops after
// yielding an error.
func (s *store) objects(ctx context.Context, prefix string) iter.Seq2[types.Object, error] {
	return func(yield func(types.Object, error) bool) {
		in := &awss3.ListObjectsV2Input{Bucket: &s.bucket, MaxKeys: aws.Int32(pageSize)}
		if p := s.dir + prefix; p != "" {
			in.Prefix = aws.String(p)
		}
		pages := awss3.NewListObjectsV2Paginator(s.client, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				yield(types.Object{}, mapErr(prefix, err))
				return
			}
			for _, obj := range page.Contents {
				key, ok := strings.CutPrefix(aws.ToString(obj.Key), s.dir)
				if !ok || blob.CheckKey(key) != nil {
					continue // not reachable through this store
				}
				if !yield(obj, nil) {
					return
				}
			}
		}
	}
}

// DeleteTree implements blob.TreeDeleter with DeleteObjects, up to 1,000
// keys a request, deleting each page of the listing as it arrives.
func (s *store) DeleteTree(ctx context.Context, dir string) error {
	if _, err := s.objectKey(ctx, dir); err != nil {
		return err
	}
	var (
		batch []types.ObjectIdentifier
		n     int
		errs  []error
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		out, err := s.client.DeleteObjects(ctx, &awss3.DeleteObjectsInput{
			Bucket: &s.bucket,
			Delete: &types.Delete{Objects: batch, Quiet: aws.Bool(true)},
		})
		batch = batch[:0]
		if err != nil {
			return mapErr(dir+"/", err)
		}
		for _, e := range out.Errors {
			key := strings.TrimPrefix(aws.ToString(e.Key), s.dir)
			errs = append(errs, fmt.Errorf("s3: %q: delete failed: %s: %s", key, aws.ToString(e.Code), aws.ToString(e.Message)))
		}
		return nil
	}
	for obj, err := range s.objects(ctx, dir+"/") {
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		batch = append(batch, types.ObjectIdentifier{Key: obj.Key})
		n++
		if len(batch) == pageSize {
			if err := flush(); err != nil {
				return errors.Join(append(errs, err)...)
			}
		}
	}
	if err := flush(); err != nil {
		return errors.Join(append(errs, err)...)
	}
	if n == 0 {
		return fmt.Errorf("s3: %q: %w", dir+"/", blob.ErrNotExist)
	}
	return errors.Join(errs...)
}

// contentType is the Content-Type stored with data.
func contentType(data []byte) string {
	if utf8.Valid(data) {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// newWriteID returns a random 128-bit write id in hex.
func newWriteID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("s3: write id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// newInfo builds an Info from an object's attributes; meta may be nil.
func newInfo(key string, size int64, etag *string, meta map[string]string, modified *time.Time) blob.Info {
	return blob.Info{
		Key:      key,
		Size:     size,
		Version:  joinVersion(aws.ToString(etag), metaValue(meta, metaWriteID)),
		Modified: aws.ToTime(modified),
	}
}
