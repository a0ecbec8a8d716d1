package integration

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloudmem/cloudmem/backends/s3"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/storeurl"
)

// The S3 tests run against MinIO (emulators.sh), which the environment
// names: CLOUDMEM_TEST_S3_ENDPOINT, CLOUDMEM_TEST_BUCKET, and the SDK's own
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION.

// Subtests of blobtest that MinIO cannot prove, and why.
var minioSkips = map[string]string{
	"DeleteIfVersionRace": "MinIO ignores If-Match on DeleteObject; proved only on AWS",
	"KeyAndTreeCoexist": "MinIO (backed by a file system) leaves the keys under a key that is also an object " +
		"(a/b/c when a/b exists) out of listings; proved only on AWS",
	"ListVersionMatchesStat": "S3 listings carry no user metadata, so a List version is the bare ETag while Stat's adds " +
		"the write id (package s3, Versions); ListInfo checks that a listed version works as IfVersion",
}

// s3Server returns MinIO's endpoint and the test bucket, or fails/skips.
func s3Server(t *testing.T) (endpoint, bucket string) {
	t.Helper()
	endpoint = server(t, "MinIO", "CLOUDMEM_TEST_S3_ENDPOINT")
	return endpoint, testBucket(t, "MinIO")
}

// s3Client returns a client for MinIO whose requests go through rt
// (http.DefaultTransport when nil).
func s3Client(t *testing.T, endpoint string, rt http.RoundTripper) *awss3.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return awss3.NewFromConfig(cfg, func(o *awss3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
		if rt != nil {
			o.HTTPClient = &http.Client{Transport: rt}
		}
	})
}

// newS3Store returns an empty store under a unique prefix of the test
// bucket, opened as a user would (endpoint, path style, the SDK's chain),
// and deletes what the test left there.
func newS3Store(t *testing.T) blob.Store {
	t.Helper()
	endpoint, bucket := s3Server(t)
	opts := &s3.Options{Endpoint: endpoint, PathStyle: true}
	dir := "agent/" + uniquePrefix()
	s, err := s3.Open(t.Context(), bucket, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	root, err := s3.Open(t.Context(), bucket, "", opts)
	if err != nil {
		t.Fatal(err)
	}
	cleanUpTree(t, root, dir)
	return s
}

// newS3BucketStore returns a store over the whole of a new bucket, so that
// keys of the full blob.MaxKeyLen fit (S3 keys are at most 1,024 bytes,
// prefix included), and removes the bucket afterwards.
func newS3BucketStore(t *testing.T) blob.Store {
	t.Helper()
	endpoint, _ := s3Server(t)
	client := s3Client(t, endpoint, nil)
	bucket := "cloudmem-" + uniquePrefix()
	if _, err := client.CreateBucket(t.Context(), &awss3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatalf("CreateBucket %s: %v", bucket, err)
	}
	t.Cleanup(func() {
		if err := removeBucket(context.Background(), client, bucket); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	s, err := s3.Open(t.Context(), bucket, "", &s3.Options{Client: client})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// removeBucket deletes every object of bucket, then the bucket. Like
// cleanUpTree, it lists again until nothing is left.
func removeBucket(ctx context.Context, client *awss3.Client, bucket string) error {
	for range 10 {
		page, err := client.ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: &bucket})
		if err != nil {
			return err
		}
		if len(page.Contents) == 0 {
			_, err := client.DeleteBucket(ctx, &awss3.DeleteBucketInput{Bucket: &bucket})
			return err
		}
		var ids []types.ObjectIdentifier
		for _, obj := range page.Contents {
			ids = append(ids, types.ObjectIdentifier{Key: obj.Key})
		}
		if _, err := client.DeleteObjects(ctx, &awss3.DeleteObjectsInput{
			Bucket: &bucket, Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		}); err != nil {
			return err
		}
	}
	return fmt.Errorf("bucket %s is not empty after 10 rounds", bucket)
}

// TestS3Conformance runs blobtest over a prefixed store (the usual
// deployment) and over a whole bucket (where the longest keys fit).
func TestS3Conformance(t *testing.T) {
	t.Run("prefix", func(t *testing.T) {
		skip := maps.Clone(minioSkips)
		skip["MaxLenKey"] = "under a prefix, keys are shorter by the prefix: S3 keys are at most 1,024 bytes; " +
			"the bucket run proves the longest key"
		blobtest.RunWith(t, newS3Store, blobtest.Options{Skip: skip})
	})
	t.Run("bucket", func(t *testing.T) {
		blobtest.RunWith(t, newS3BucketStore, blobtest.Options{Skip: minioSkips})
	})
}

// TestS3ListInfo checks how S3 spells a listed version, since it cannot
// match Stat's without a HEAD per listed key (blobtest's
// ListVersionMatchesStat is skipped): it is the ETag part of Stat's, and
// it works as a condition.
func TestS3ListInfo(t *testing.T) {
	s := newS3Store(t)
	ctx := t.Context()
	data := map[string]string{"x": "", "y/z": "twelve bytes", "y/zz": "binary\x00\xff"}
	stat := map[string]blob.Info{}
	for k, v := range data {
		if _, err := s.Put(ctx, k, []byte(v), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
		info, err := s.Stat(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		stat[k] = info
	}
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, info := range infos {
		keys = append(keys, info.Key)
		etag, _, _ := strings.Cut(stat[info.Key].Version, "#")
		if info.Size != int64(len(data[info.Key])) || info.Version != etag {
			t.Errorf("List Info of %q = {Size:%d Version:%q}, want {Size:%d Version:%q} (the ETag of Stat's %q)",
				info.Key, info.Size, info.Version, len(data[info.Key]), etag, stat[info.Key].Version)
		}
	}
	if want := []string{"x", "y/z", "y/zz"}; !slices.Equal(keys, want) {
		t.Fatalf("List keys = %q, want %q", keys, want)
	}
	// A List version is a condition on the content.
	if _, err := s.Put(ctx, "y/z", []byte("new"), blob.Cond{IfVersion: infos[1].Version}); err != nil {
		t.Fatalf("Put(IfVersion) with a List version: %v", err)
	}
	if _, err := s.Put(ctx, "y/z", []byte("newer"), blob.Cond{IfVersion: infos[1].Version}); !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfVersion) with a stale List version: error = %v, want ErrPrecondition", err)
	}
	if err := s.Delete(ctx, "y/zz", blob.Cond{IfVersion: infos[2].Version}); err != nil {
		t.Fatalf("Delete(IfVersion) with a List version: %v", err)
	}
}

// TestS3PutRetry proves that a conditional Put whose first attempt landed
// is not reported as a conflict when the SDK retries it (checkPutRetry):
// the transport lets the first PUT reach MinIO, then shows the SDK a 500
// instead of the answer, so the SDK sends the PUT again and MinIO answers
// 412.
func TestS3PutRetry(t *testing.T) {
	endpoint, bucket := s3Server(t)
	const body = `<?xml version="1.0" encoding="UTF-8"?>` +
		`<Error><Code>InternalError</Code><Message>the test transport dropped the answer</Message></Error>`
	rt := &lostAnswer{
		status: http.StatusInternalServerError,
		header: http.Header{"Content-Type": {"application/xml"}},
		body:   body,
	}
	s, err := s3.Open(t.Context(), bucket, "agent/"+uniquePrefix(), &s3.Options{Client: s3Client(t, endpoint, rt)})
	if err != nil {
		t.Fatal(err)
	}
	cleanUpTree(t, s, "k")
	checkPutRetry(t, s, rt, "MinIO", putStatuses{
		method:  http.MethodPut,
		created: http.StatusOK,
		exists:  http.StatusPreconditionFailed,
		stale:   http.StatusPreconditionFailed,
		checks:  true,
	})
}

// TestS3PutLostAnswerUnderRival: see checkLostAnswerUnderRival.
func TestS3PutLostAnswerUnderRival(t *testing.T) {
	endpoint, bucket := s3Server(t)
	rt := &lostAnswer{
		status: http.StatusInternalServerError,
		header: http.Header{"Content-Type": {"application/xml"}},
		body: `<?xml version="1.0" encoding="UTF-8"?>` +
			`<Error><Code>InternalError</Code><Message>the test transport dropped the answer</Message></Error>`,
	}
	dir := "agent/" + uniquePrefix()
	s, err := s3.Open(t.Context(), bucket, dir, &s3.Options{Client: s3Client(t, endpoint, rt)})
	if err != nil {
		t.Fatal(err)
	}
	rival, err := s3.Open(t.Context(), bucket, dir, &s3.Options{Client: s3Client(t, endpoint, nil)})
	if err != nil {
		t.Fatal(err)
	}
	cleanUpTree(t, s, "k")
	checkLostAnswerUnderRival(t, s, rival, rt, http.MethodPut)
}

// TestS3URL opens the store through storeurl, as the CLI does.
func TestS3URL(t *testing.T) {
	endpoint, bucket := s3Server(t)
	dir := "agent/" + uniquePrefix()
	raw := "s3://" + bucket + "/" + dir + "?endpoint=" + endpoint + "&path_style=true&region=us-east-1&prefix=sub"
	s := openURL(t, raw)
	root, err := s3.Open(t.Context(), bucket, "", &s3.Options{Endpoint: endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	cleanUpTree(t, root, dir)
	if _, err := s.Put(t.Context(), "notes.md", []byte("hello"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	got, _, err := root.Get(t.Context(), dir+"/sub/notes.md", blob.MaxObjectBytes)
	if err != nil || string(got) != "hello" {
		t.Fatalf("object %s/sub/notes.md = %q, %v; want \"hello\"", dir, got, err)
	}
	if _, err := storeurl.Open(t.Context(), "s3://"+bucket+"?endpoint="+endpoint+"&pathstyle=true"); err == nil ||
		!strings.Contains(err.Error(), `"pathstyle"`) {
		t.Fatalf("unknown parameter: error = %v, want one naming \"pathstyle\"", err)
	}
}

// TestS3Handler runs the memory handler's SPEC cases over the S3 store, each
// in a bucket of its own: the cases include memory paths of the longest
// length, whose keys would not fit under a test prefix.
func TestS3Handler(t *testing.T) {
	memorytest.RunWith(t, newS3BucketStore, parallelCases)
}

// TestS3HandlerConcurrency runs the handler's races (16 writers, one
// Handler each) over one S3 store. They rest on conditional Put, which
// MinIO enforces as AWS does, except the race of a file against a directory
// of the same name (see minioConcurrencySkips).
func TestS3HandlerConcurrency(t *testing.T) {
	memorytest.RunConcurrencyWith(t, newS3Store, memorytest.ConcurrencyOptions{Skip: minioConcurrencySkips})
}

// The handler's races that MinIO cannot prove, and why: none. MinIO leaves
// t/a/b out of every listing while the object t/a exists, which the
// handler learns from the server (blob.Traits.HidesUnderObjects) and answers with a create
// protocol that looks by Stat (memory's settleHidden).
var minioConcurrencySkips = map[string]string{}

// TestS3SameOutputAsFile runs the session of session_test.go through
// memory.Handler over the local-directory store and over the S3 store, and
// requires byte-identical results and final contents: moving an agent's
// memory from a directory to a bucket changes nothing it sees. Listing the
// session's 1,005-file directory takes two ListObjectsV2 pages.
func TestS3SameOutputAsFile(t *testing.T) {
	sameOutputAsFile(t, "S3", newS3Store(t))
}
