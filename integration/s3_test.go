package integration

import (
	"context"
	"encoding/json"
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/s3"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory"
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
	if bucket = os.Getenv("CLOUDMEM_TEST_BUCKET"); bucket == "" {
		missing(t, "MinIO", "CLOUDMEM_TEST_BUCKET is not set")
	}
	return endpoint, bucket
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
	t.Cleanup(func() { cleanS3(t, root, dir) })
	return s
}

// cleanS3 deletes the tree dir of root. It repeats until the tree is gone:
// MinIO hides a/b/c from listings while a/b exists.
func cleanS3(t *testing.T, root blob.Store, dir string) {
	t.Helper()
	for range 10 {
		// t.Context() is done by now.
		err := blob.DeleteTree(context.Background(), root, dir)
		if errors.Is(err, blob.ErrNotExist) {
			return
		}
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
	}
	t.Errorf("cleanup: %s is not empty after 10 rounds", dir)
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
// cleanS3, it lists again until nothing is left.
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
// is not reported as a conflict when the SDK retries it: the transport
// lets the first PUT reach MinIO, then shows the SDK a 500 instead of the
// answer, so the SDK sends the PUT again and MinIO answers 412.
func TestS3PutRetry(t *testing.T) {
	endpoint, bucket := s3Server(t)
	rt := &lostAnswer{base: http.DefaultTransport}
	s, err := s3.Open(t.Context(), bucket, "agent/"+uniquePrefix(), &s3.Options{Client: s3Client(t, endpoint, rt)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	t.Cleanup(func() { cleanS3(t, s, "k") })

	check := func(what string, info blob.Info, err error, data string, wantStatuses ...int) {
		t.Helper()
		if got := rt.take(); !slices.Equal(got, wantStatuses) {
			t.Fatalf("%s: MinIO answered the PUTs with %v, want %v", what, got, wantStatuses)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got, st, err := s.Get(ctx, "k/a")
		if err != nil || string(got) != data || st.Version != info.Version {
			t.Fatalf("%s: Get = %q, version %q, %v; want %q, version %q (Put's)", what, got, st.Version, err, data, info.Version)
		}
	}

	rt.arm()
	first, err := s.Put(ctx, "k/a", []byte("one"), blob.Cond{IfAbsent: true})
	check("Put(IfAbsent) retried after it landed", first, err, "one", http.StatusOK, http.StatusPreconditionFailed)

	rt.arm()
	info, err := s.Put(ctx, "k/a", []byte("two"), blob.Cond{IfVersion: first.Version})
	check("Put(IfVersion) retried after it landed", info, err, "two", http.StatusOK, http.StatusPreconditionFailed)

	// A rival's write is still a conflict.
	_, err = s.Put(ctx, "k/a", []byte("rival"), blob.Cond{IfAbsent: true})
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfAbsent) of an existing key: error = %v, want ErrPrecondition", err)
	}
	rt.take()
	_, err = s.Put(ctx, "k/a", []byte("rival"), blob.Cond{IfVersion: first.Version})
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfVersion) with a stale version: error = %v, want ErrPrecondition", err)
	}
	check("rival writes", info, nil, "two", http.StatusPreconditionFailed)
}

// lostAnswer is a RoundTripper that, once armed, forwards the next PUT and
// replaces its successful answer with a 500, as if the connection broke
// after the write landed. It records the status MinIO gave every PUT.
type lostAnswer struct {
	base     http.RoundTripper
	mu       sync.Mutex
	armed    bool
	statuses []int
}

func (l *lostAnswer) arm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = true
}

// take returns the statuses recorded since the last take.
func (l *lostAnswer) take() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.statuses
	l.statuses = nil
	return got
}

func (l *lostAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodPut {
		return resp, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statuses = append(l.statuses, resp.StatusCode)
	if !l.armed || resp.StatusCode != http.StatusOK {
		return resp, nil
	}
	l.armed = false
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	const body = `<?xml version="1.0" encoding="UTF-8"?>` +
		`<Error><Code>InternalError</Code><Message>the test transport dropped the answer</Message></Error>`
	return &http.Response{
		Status:        "500 Internal Server Error",
		StatusCode:    http.StatusInternalServerError,
		Proto:         resp.Proto,
		ProtoMajor:    resp.ProtoMajor,
		ProtoMinor:    resp.ProtoMinor,
		Header:        http.Header{"Content-Type": {"application/xml"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// TestS3URL opens the store through storeurl, as the CLI does.
func TestS3URL(t *testing.T) {
	endpoint, bucket := s3Server(t)
	dir := "agent/" + uniquePrefix()
	raw := "s3://" + bucket + "/" + dir + "?endpoint=" + endpoint + "&path_style=true&region=us-east-1&prefix=sub"
	s, err := storeurl.Open(t.Context(), raw)
	if err != nil {
		t.Fatal(err)
	}
	root, err := s3.Open(t.Context(), bucket, "", &s3.Options{Endpoint: endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cleanS3(t, root, dir) })
	if _, err := s.Put(t.Context(), "notes.md", []byte("hello"), blob.Cond{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	got, _, err := root.Get(t.Context(), dir+"/sub/notes.md")
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
	memorytest.Run(t, newS3BucketStore)
}

// TestS3HandlerConcurrency runs the handler's races (16 writers, one
// Handler each) over one S3 store. They rest on conditional Put, which
// MinIO enforces as AWS does.
func TestS3HandlerConcurrency(t *testing.T) {
	memorytest.RunConcurrency(t, newS3Store)
}

// sessionSeed is the content both stores start with: enough files in one
// directory that listing it takes two ListObjectsV2 pages.
func sessionSeed() map[string][]byte {
	seed := map[string][]byte{
		"projects/alpha/notes.md": []byte("# Alpha\n\n- kickoff on Monday\n- owner: Dana\n"),
		"projects/alpha/.draft":   []byte("hidden draft\n"),
		"projects/beta/todo.txt":  []byte("one\ntwo\nthree\n"),
		"node_modules/pkg/x.js":   []byte("module.exports = 1\n"),
		"bin/blob.dat":            {0x00, 0xff, 0xfe, 'x', '\n'},
	}
	for i := range 1005 {
		seed[fmt.Sprintf("log/%04d.md", i)] = fmt.Appendf(nil, "entry %d\n", i)
	}
	return seed
}

// sessionCommands is a command stream that touches every command, its
// errors, hidden and ignored names, odd characters and a large directory.
var sessionCommands = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/projects"}`,
	`{"command":"view","path":"/memories/projects/alpha/notes.md"}`,
	`{"command":"view","path":"/memories/projects/beta/todo.txt","view_range":[2,3]}`,
	`{"command":"view","path":"/memories/log/0999.md"}`,
	`{"command":"view","path":"/memories/bin/blob.dat"}`,
	`{"command":"view","path":"/memories/missing.md"}`,
	`{"command":"create","path":"/memories/projects/alpha/notes.md","file_text":"clobber"}`,
	`{"command":"create","path":"/memories/new/deep/file.md","file_text":"first line\nsecond line\n"}`,
	`{"command":"create","path":"/memories/unicode/日本語 ファイル.md","file_text":"héllo wörld\n"}`,
	`{"command":"create","path":"/memories/projects/alpha/notes.md/child","file_text":"x"}`,
	`{"command":"create","path":"/memories/projects","file_text":"x"}`,
	`{"command":"create","path":"/memories/../etc/passwd","file_text":"x"}`,
	`{"command":"create","path":"/memories/.cloudmem/key","file_text":"x"}`,
	`{"command":"str_replace","path":"/memories/projects/alpha/notes.md","old_str":"Monday","new_str":"Tuesday"}`,
	`{"command":"str_replace","path":"/memories/projects/alpha/notes.md","old_str":"absent","new_str":"x"}`,
	`{"command":"str_replace","path":"/memories/projects/beta/todo.txt","old_str":"o","new_str":"0"}`,
	`{"command":"insert","path":"/memories/projects/beta/todo.txt","insert_line":1,"insert_text":"one and a half"}`,
	`{"command":"insert","path":"/memories/projects/beta/todo.txt","insert_line":99,"insert_text":"x"}`,
	`{"command":"view","path":"/memories/projects/beta/todo.txt"}`,
	`{"command":"rename","old_path":"/memories/projects/beta","new_path":"/memories/archive/beta"}`,
	`{"command":"rename","old_path":"/memories/new/deep/file.md","new_path":"/memories/unicode/moved.md"}`,
	`{"command":"rename","old_path":"/memories/unicode/moved.md","new_path":"/memories/projects/alpha/notes.md"}`,
	`{"command":"rename","old_path":"/memories/nothing","new_path":"/memories/else"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"delete","path":"/memories/log"}`,
	`{"command":"delete","path":"/memories/archive/beta/todo.txt"}`,
	`{"command":"delete","path":"/memories/archive"}`,
	`{"command":"delete","path":"/memories"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"frobnicate","path":"/memories"}`,
	`not json`,
}

// TestS3SameOutputAsFile runs one command stream through memory.Handler
// over the local-directory store and over the S3 store, from the same
// seed, and requires byte-identical results and final contents: moving an
// agent's memory from a directory to a bucket changes nothing it sees.
func TestS3SameOutputAsFile(t *testing.T) {
	s3Store := newS3Store(t)
	fileStore, err := file.Open(t.Context(), t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	fileOut := runSession(t, fileStore)
	s3Out := runSession(t, s3Store)
	if fileOut.results != s3Out.results {
		t.Errorf("results differ.\nfile store:\n%s\nS3 store:\n%s", fileOut.results, s3Out.results)
	}
	if fileOut.contents != s3Out.contents {
		t.Errorf("final contents differ.\nfile store:\n%s\nS3 store:\n%s", fileOut.contents, s3Out.contents)
	}
	// Guard against a stream that proves nothing: the results hold
	// successes and errors, and the large directory was listed.
	for _, want := range []string{`"IsError":true`, "Tuesday", "one and a half", "/memories/log/1004.md"} {
		if !strings.Contains(fileOut.results, want) {
			t.Errorf("the results do not contain %q:\n%s", want, fileOut.results)
		}
	}
}

type session struct {
	results  string // one JSON line per command
	contents string // every key and its data after the session
}

// runSession seeds s, runs sessionCommands through a Handler over it and
// returns what it printed and what it left.
func runSession(t *testing.T, s blob.Store) session {
	t.Helper()
	ctx := t.Context()
	seed := sessionSeed()
	var g sync.WaitGroup
	errs := make(chan error, len(seed))
	sem := make(chan struct{}, 16)
	for k, v := range seed {
		g.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := s.Put(ctx, k, v, blob.Cond{}); err != nil {
				errs <- err
			}
		})
	}
	g.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	h, err := memory.New(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out session
	var b strings.Builder
	for _, cmd := range sessionCommands {
		res := h.Execute(ctx, []byte(cmd))
		line, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	out.results = b.String()
	b.Reset()
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		data, _, err := s.Get(ctx, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%q: %q\n", info.Key, data)
	}
	out.contents = b.String()
	return out
}
