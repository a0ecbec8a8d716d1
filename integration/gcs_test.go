package integration

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/cloudmem/cloudmem/backends/gcs"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/storeurl"
)

// The GCS tests run against fake-gcs-server v1.56.1 (emulators.sh), which
// STORAGE_EMULATOR_HOST names; the client library sends every request there
// without credentials. CLOUDMEM_TEST_BUCKET names a bucket that exists.
//
// What fake-gcs-server proves, as measured: it enforces ifGenerationMatch
// on uploads (Put(IfAbsent) and Put(IfVersion), races included) and the
// pinned generation of a delete (generation=G answers 404 once G is not the
// live generation), but it ignores ifGenerationMatch on delete. So the
// Delete(IfVersion) tests here (DeleteIfVersion, DeleteIfVersionRace)
// prove the generation pin alone; the store sends ifGenerationMatch too,
// which only real GCS enforces.

// gcsServer returns the test bucket, or fails/skips when the server is
// missing.
func gcsServer(t *testing.T) (bucket string) {
	t.Helper()
	server(t, "fake-gcs-server", "STORAGE_EMULATOR_HOST")
	return testBucket(t, "fake-gcs-server")
}

// openGCS opens a store as a user would (STORAGE_EMULATOR_HOST, no
// options) and closes it when the test ends.
func openGCS(t *testing.T, bucket, prefix string, opts *gcs.Options) blob.Store {
	t.Helper()
	s, err := gcs.Open(t.Context(), bucket, prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.(io.Closer).Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// newGCSStore returns an empty store under a unique prefix of the test
// bucket and deletes what the test left there.
func newGCSStore(t *testing.T) blob.Store {
	t.Helper()
	bucket := gcsServer(t)
	dir := "agent/" + uniquePrefix()
	root := openGCS(t, bucket, "", nil)
	cleanUpTree(t, root, dir) // cleanups run last first, so root is still open then
	return openGCS(t, bucket, dir, nil)
}

// gcsClient returns a client for the emulator whose requests go through rt
// (http.DefaultTransport when nil), retrying after 10ms rather than the
// library's default of about a second.
func gcsClient(t *testing.T, rt http.RoundTripper) *storage.Client {
	t.Helper()
	gcsServer(t)
	opts := []option.ClientOption{storage.WithJSONReads()}
	if rt != nil {
		opts = append(opts, option.WithHTTPClient(&http.Client{Transport: rt}))
	}
	client, err := storage.NewClient(t.Context(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	client.SetRetry(storage.WithBackoff(gax.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond}))
	t.Cleanup(func() { client.Close() })
	return client
}

// newGCSBucketStore returns a store over the whole of a new bucket, so that
// keys of the full blob.MaxKeyLen fit (object names are at most 1,024
// bytes, prefix included), and removes the bucket afterwards.
func newGCSBucketStore(t *testing.T) blob.Store {
	t.Helper()
	client := gcsClient(t, nil)
	bucket := "cloudmem-" + uniquePrefix()
	if err := client.Bucket(bucket).Create(t.Context(), "cloudmem-test-project", nil); err != nil {
		t.Fatalf("creating bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() {
		if err := removeGCSBucket(context.Background(), client.Bucket(bucket)); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return openGCS(t, bucket, "", &gcs.Options{Client: client})
}

// removeGCSBucket deletes every object of b, then b.
func removeGCSBucket(ctx context.Context, b *storage.BucketHandle) error {
	it := b.Objects(ctx, nil)
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return err
		}
		if err := b.Object(attrs.Name).Delete(ctx); err != nil {
			return err
		}
	}
	return b.Delete(ctx)
}

// TestGCSConformance runs blobtest over a prefixed store (the usual
// deployment) and over a whole bucket (where the longest keys fit).
// Nothing is skipped for the server except what the prefix makes
// impossible; see the comment at the top of this file for what the
// Delete(IfVersion) tests prove on fake-gcs-server.
func TestGCSConformance(t *testing.T) {
	t.Run("prefix", func(t *testing.T) {
		blobtest.RunWith(t, newGCSStore, blobtest.Options{Skip: map[string]string{
			"MaxLenKey": "under a prefix, keys are shorter by the prefix: GCS object names are at most 1,024 bytes; " +
				"the bucket run proves the longest key",
		}})
	})
	t.Run("bucket", func(t *testing.T) {
		blobtest.Run(t, newGCSBucketStore)
	})
}

// TestGCSHandler runs the memory handler's SPEC cases over the GCS store,
// each case in a bucket of its own: some cases use keys of nearly
// blob.MaxKeyLen bytes, which a store prefix would push past the 1,024
// bytes of an object name.
func TestGCSHandler(t *testing.T) {
	memorytest.RunWith(t, newGCSBucketStore, parallelCases)
}

// TestGCSHandlerConcurrency runs the handler's races (16 writers, one
// Handler each) over one GCS store.
func TestGCSHandlerConcurrency(t *testing.T) {
	memorytest.RunConcurrency(t, newGCSStore)
}

// TestGCSPutRetry proves that a conditional Put whose first attempt landed
// is not reported as a conflict when the library retries it
// (checkPutRetry): the transport lets the first upload reach the server,
// then shows the library a 503 instead of the answer, so the library sends
// the upload again and the server answers 412 (which fake-gcs-server does
// as GCS does). Then the same for a Delete(IfVersion).
func TestGCSPutRetry(t *testing.T) {
	bucket := gcsServer(t)
	rt := &lostAnswer{
		status: http.StatusServiceUnavailable,
		header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
		body:   `{"error":{"code":503,"message":"the test transport dropped the answer"}}`,
	}
	dir := "agent/" + uniquePrefix()
	s := openGCS(t, bucket, dir, &gcs.Options{Client: gcsClient(t, rt)})
	root := openGCS(t, bucket, "", nil)
	cleanUpTree(t, root, dir)
	ctx := t.Context()
	info := checkPutRetry(t, s, rt, "the server", putStatuses{
		method:  http.MethodPost,
		created: http.StatusOK,
		exists:  http.StatusPreconditionFailed,
		stale:   http.StatusPreconditionFailed,
		checks:  true,
	})

	// A Delete(IfVersion) whose first attempt landed: the retry finds the
	// pinned generation gone, and the store reports the key gone
	// (ErrNotExist), never a conflict.
	rt.arm(http.MethodDelete)
	err := s.Delete(ctx, "k/a", blob.Cond{IfVersion: info.Version})
	// GCS answers a delete with 204, fake-gcs-server with 200.
	if got := rt.take(); len(got) != 2 || got[0]/100 != 2 || got[1] != http.StatusNotFound {
		t.Fatalf("Delete(IfVersion): the server answered the deletes with %v, want a success, then 404", got)
	}
	if !errors.Is(err, blob.ErrNotExist) || errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Delete(IfVersion) retried after it landed: error = %v, want ErrNotExist", err)
	}
	if _, err := s.Stat(ctx, "k/a"); !errors.Is(err, blob.ErrNotExist) {
		t.Fatalf("Stat after Delete: error = %v, want ErrNotExist", err)
	}
}

// TestGCSPutLostAnswerUnderRival: see checkLostAnswerUnderRival.
func TestGCSPutLostAnswerUnderRival(t *testing.T) {
	bucket := gcsServer(t)
	rt := &lostAnswer{
		status: http.StatusServiceUnavailable,
		header: http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
		body:   `{"error":{"code":503,"message":"the test transport dropped the answer"}}`,
	}
	dir := "agent/" + uniquePrefix()
	s := openGCS(t, bucket, dir, &gcs.Options{Client: gcsClient(t, rt)})
	root := openGCS(t, bucket, "", nil)
	cleanUpTree(t, root, dir)
	checkLostAnswerUnderRival(t, s, openGCS(t, bucket, dir, nil), rt, http.MethodPost)
}

// TestGCSURL opens the store through storeurl, as the CLI does, with the
// emulator named by STORAGE_EMULATOR_HOST and then by endpoint=.
func TestGCSURL(t *testing.T) {
	bucket := gcsServer(t)
	dir := "agent/" + uniquePrefix()
	root := openGCS(t, bucket, "", nil)
	cleanUpTree(t, root, dir)
	ctx := t.Context()
	s := openURL(t, "gs://"+bucket+"/"+dir+"?prefix=sub")
	if _, err := s.Put(ctx, "notes.md", []byte("hello"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	got, _, err := root.Get(ctx, dir+"/sub/notes.md", blob.MaxObjectBytes)
	if err != nil || string(got) != "hello" {
		t.Fatalf("object %s/sub/notes.md = %q, %v; want \"hello\"", dir, got, err)
	}
	if _, err := storeurl.Open(ctx, "gs://"+bucket+"?endpiont=x"); err == nil || !strings.Contains(err.Error(), `"endpiont"`) {
		t.Fatalf("unknown parameter: error = %v, want one naming \"endpiont\"", err)
	}

	// endpoint= alone reaches the emulator: an http endpoint gets no
	// credentials, and reads use the JSON API.
	host := os.Getenv("STORAGE_EMULATOR_HOST")
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	s = openURL(t, "gs://"+bucket+"/"+dir+"?endpoint=http://"+host)
	got, info, err := s.Get(ctx, "sub/notes.md", blob.MaxObjectBytes)
	if err != nil || string(got) != "hello" {
		t.Fatalf("Get through endpoint= = %q, %v; want \"hello\"", got, err)
	}
	if _, err := s.Put(ctx, "sub/notes.md", []byte("bye"), blob.Cond{IfVersion: info.Version}); err != nil {
		t.Fatalf("Put(IfVersion) through endpoint=: %v", err)
	}
}

// TestGCSSameOutputAsFile runs the session of session_test.go through
// memory.Handler over a local-directory store and over a GCS store, and
// requires byte-identical results and final contents.
func TestGCSSameOutputAsFile(t *testing.T) {
	sameOutputAsFile(t, "GCS", newGCSStore(t))
}
