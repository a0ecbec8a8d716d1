package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/gcs"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory"
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
	if bucket = os.Getenv("CLOUDMEM_TEST_BUCKET"); bucket == "" {
		missing(t, "fake-gcs-server", "CLOUDMEM_TEST_BUCKET is not set")
	}
	return bucket
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
	t.Cleanup(func() {
		// t.Context() is done by now. Cleanups run last first, so root
		// is still open.
		if err := blob.DeleteTree(context.Background(), root, dir); err != nil && !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("cleanup: %v", err)
		}
	})
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
	memorytest.Run(t, newGCSBucketStore)
}

// TestGCSHandlerConcurrency runs the handler's races (16 writers, one
// Handler each) over one GCS store.
func TestGCSHandlerConcurrency(t *testing.T) {
	memorytest.RunConcurrency(t, newGCSStore)
}

// TestGCSPutRetry proves that a conditional Put whose first attempt landed
// is not reported as a conflict when the library retries it: the transport
// lets the first upload reach the server, then shows the library a 503
// instead of the answer, so the library sends the upload again and the
// server answers 412 (which fake-gcs-server does as GCS does).
func TestGCSPutRetry(t *testing.T) {
	bucket := gcsServer(t)
	rt := &gcsLostAnswer{base: http.DefaultTransport}
	dir := "agent/" + uniquePrefix()
	s := openGCS(t, bucket, dir, &gcs.Options{Client: gcsClient(t, rt)})
	root := openGCS(t, bucket, "", nil)
	t.Cleanup(func() {
		if err := blob.DeleteTree(context.Background(), root, dir); err != nil && !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("cleanup: %v", err)
		}
	})
	ctx := t.Context()

	check := func(what string, info blob.Info, err error, data string, wantStatuses ...int) {
		t.Helper()
		if got := rt.take(); !slices.Equal(got, wantStatuses) {
			t.Fatalf("%s: the server answered the uploads with %v, want %v", what, got, wantStatuses)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got, st, err := s.Get(ctx, "k/a")
		if err != nil || string(got) != data || st.Version != info.Version {
			t.Fatalf("%s: Get = %q, version %q, %v; want %q, version %q (Put's)", what, got, st.Version, err, data, info.Version)
		}
	}

	rt.arm(http.MethodPost)
	first, err := s.Put(ctx, "k/a", []byte("one"), blob.Cond{IfAbsent: true})
	check("Put(IfAbsent) retried after it landed", first, err, "one", http.StatusOK, http.StatusPreconditionFailed)

	rt.arm(http.MethodPost)
	info, err := s.Put(ctx, "k/a", []byte("two"), blob.Cond{IfVersion: first.Version})
	check("Put(IfVersion) retried after it landed", info, err, "two", http.StatusOK, http.StatusPreconditionFailed)

	// A rival's write is still a conflict.
	_, err = s.Put(ctx, "k/a", []byte("rival"), blob.Cond{IfAbsent: true})
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfAbsent) of an existing key: error = %v, want ErrPrecondition", err)
	}
	_, err = s.Put(ctx, "k/a", []byte("rival"), blob.Cond{IfVersion: first.Version})
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfVersion) with a stale version: error = %v, want ErrPrecondition", err)
	}
	check("rival writes", info, nil, "two", http.StatusPreconditionFailed, http.StatusPreconditionFailed)

	// A Delete(IfVersion) whose first attempt landed: the retry finds the
	// pinned generation gone, and the store reports the key gone
	// (ErrNotExist), never a conflict.
	rt.arm(http.MethodDelete)
	err = s.Delete(ctx, "k/a", blob.Cond{IfVersion: info.Version})
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

// gcsLostAnswer is a RoundTripper that, once armed for a method, forwards
// the next successful request of that method and replaces its answer with a
// 503, as if the connection broke after the server acted. It records the
// status the server gave every request of the armed method.
type gcsLostAnswer struct {
	base     http.RoundTripper
	mu       sync.Mutex
	method   string // the method watched; "" before the first arm
	armed    bool
	statuses []int
}

func (l *gcsLostAnswer) arm(method string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.method, l.armed, l.statuses = method, true, nil
}

// take returns the statuses recorded since the last take or arm.
func (l *gcsLostAnswer) take() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.statuses
	l.statuses = nil
	return got
}

func (l *gcsLostAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil || req.Method != l.method {
		return resp, err
	}
	l.statuses = append(l.statuses, resp.StatusCode)
	if !l.armed || resp.StatusCode >= 300 {
		return resp, nil
	}
	l.armed = false
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	const body = `{"error":{"code":503,"message":"the test transport dropped the answer"}}`
	return &http.Response{
		Status:        "503 Service Unavailable",
		StatusCode:    http.StatusServiceUnavailable,
		Proto:         resp.Proto,
		ProtoMajor:    resp.ProtoMajor,
		ProtoMinor:    resp.ProtoMinor,
		Header:        http.Header{"Content-Type": {"application/json; charset=UTF-8"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// TestGCSURL opens the store through storeurl, as the CLI does, with the
// emulator named by STORAGE_EMULATOR_HOST and then by endpoint=.
func TestGCSURL(t *testing.T) {
	bucket := gcsServer(t)
	dir := "agent/" + uniquePrefix()
	root := openGCS(t, bucket, "", nil)
	t.Cleanup(func() {
		if err := blob.DeleteTree(context.Background(), root, dir); err != nil && !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("cleanup: %v", err)
		}
	})
	ctx := t.Context()
	open := func(raw string) blob.Store {
		t.Helper()
		s, err := storeurl.Open(ctx, raw)
		if err != nil {
			t.Fatalf("storeurl.Open(%s): %v", raw, err)
		}
		t.Cleanup(func() { s.(io.Closer).Close() })
		return s
	}

	s := open("gs://" + bucket + "/" + dir + "?prefix=sub")
	if _, err := s.Put(ctx, "notes.md", []byte("hello"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	got, _, err := root.Get(ctx, dir+"/sub/notes.md")
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
	s = open("gs://" + bucket + "/" + dir + "?endpoint=http://" + host)
	got, info, err := s.Get(ctx, "sub/notes.md")
	if err != nil || string(got) != "hello" {
		t.Fatalf("Get through endpoint= = %q, %v; want \"hello\"", got, err)
	}
	if _, err := s.Put(ctx, "sub/notes.md", []byte("bye"), blob.Cond{IfVersion: info.Version}); err != nil {
		t.Fatalf("Put(IfVersion) through endpoint=: %v", err)
	}
}

// TestGCSMatchesFileStore runs one command stream through a memory.Handler
// over a GCS store and over a local-directory store and requires the same
// result, byte for byte, for every command.
func TestGCSMatchesFileStore(t *testing.T) {
	gs := newGCSStore(t)
	fs, err := file.Open(t.Context(), t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	handlers := map[string]*memory.Handler{}
	for name, s := range map[string]blob.Store{"gs": gs, "file": fs} {
		h, err := memory.New(s, memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		handlers[name] = h
	}
	for i, cmd := range commandStream {
		results := map[string]string{}
		for name, h := range handlers {
			r := h.Execute(t.Context(), []byte(cmd))
			results[name] = fmt.Sprintf("is_error=%t\n%s", r.IsError, r.Text)
			if r.Image != nil {
				results[name] += fmt.Sprintf("\nimage %s %x", r.Image.MediaType, r.Image.Data)
			}
		}
		if results["gs"] != results["file"] {
			t.Errorf("command %d %s:\ngs store:\n%s\nfile store:\n%s", i, cmd, results["gs"], results["file"])
		}
		if strings.Contains(results["gs"], "storage failed") {
			t.Errorf("command %d %s: %s", i, cmd, results["gs"])
		}
	}
	// Both stores end with the same keys and contents.
	contents := func(s blob.Store) map[string]string {
		infos, err := blob.ListAll(t.Context(), s, "")
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, info := range infos {
			data, _, err := s.Get(t.Context(), info.Key)
			if err != nil {
				t.Fatal(err)
			}
			m[info.Key] = string(data)
		}
		return m
	}
	if g, f := contents(gs), contents(fs); !maps.Equal(g, f) {
		t.Errorf("final contents differ:\ngs:   %q\nfile: %q", g, f)
	}
}

// commandStream exercises every command, with successes and errors, over
// files and directories.
var commandStream = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"create","path":"/memories/notes.md","file_text":"hello\nworld\n"}`,
	`{"command":"create","path":"/memories/notes.md","file_text":"again"}`,
	`{"command":"create","path":"/memories/projects/cloudmem/plan.md","file_text":"# Plan\n1. gcs\n2. s3\n3. azure\n"}`,
	`{"command":"create","path":"/memories/projects/cloudmem/deep/er/x.md","file_text":"deep"}`,
	`{"command":"create","path":"/memories/projects/other.txt","file_text":""}`,
	`{"command":"create","path":"/memories/.hidden/secret.md","file_text":"hidden"}`,
	`{"command":"create","path":"/memories/café/naïve ☕.md","file_text":"unicode\n"}`,
	`{"command":"create","path":"/memories/notes.md/child.md","file_text":"x"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/projects"}`,
	`{"command":"view","path":"/memories/notes.md"}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md","view_range":[2,-1]}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md","view_range":[9,10]}`,
	`{"command":"view","path":"/memories/missing.md"}`,
	`{"command":"str_replace","path":"/memories/notes.md","old_str":"world","new_str":"there"}`,
	`{"command":"str_replace","path":"/memories/notes.md","old_str":"absent","new_str":"x"}`,
	`{"command":"str_replace","path":"/memories/projects","old_str":"a","new_str":"b"}`,
	`{"command":"insert","path":"/memories/notes.md","insert_line":1,"insert_text":"inserted\n"}`,
	`{"command":"insert","path":"/memories/notes.md","insert_line":99,"insert_text":"x"}`,
	`{"command":"view","path":"/memories/notes.md"}`,
	`{"command":"rename","old_path":"/memories/notes.md","new_path":"/memories/archive/notes.md"}`,
	`{"command":"rename","old_path":"/memories/projects","new_path":"/memories/old-projects"}`,
	`{"command":"rename","old_path":"/memories/old-projects","new_path":"/memories/archive/notes.md"}`,
	`{"command":"rename","old_path":"/memories/old-projects","new_path":"/memories/old-projects/inside"}`,
	`{"command":"rename","old_path":"/memories/gone","new_path":"/memories/x"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"delete","path":"/memories/old-projects/cloudmem/plan.md"}`,
	`{"command":"delete","path":"/memories/old-projects"}`,
	`{"command":"delete","path":"/memories/old-projects"}`,
	`{"command":"delete","path":"/memories"}`,
	`{"command":"view","path":"/memories/../etc"}`,
	`{"command":"frobnicate"}`,
	`not json`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/archive/notes.md"}`,
}
