package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/cloudmem/cloudmem/backends/azure"
	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/storeurl"
)

// The Azure tests run against Azurite (emulators.sh). The environment names
// it: CLOUDMEM_TEST_AZURE_CONNECTION_STRING, a connection string with the
// development account's well-known key, and CLOUDMEM_TEST_BUCKET, the
// container.

// azureServer returns the connection string and the test container, or
// fails/skips when Azurite is not there. (server() takes a host:port or a
// URL; a connection string is neither, so this dials its BlobEndpoint.)
func azureServer(t *testing.T) (conn, containerName string) {
	t.Helper()
	const envConn = "CLOUDMEM_TEST_AZURE_CONNECTION_STRING"
	if conn = os.Getenv(envConn); conn == "" {
		missing(t, "Azurite", envConn+" is not set")
	}
	endpoint := connField(conn, "BlobEndpoint")
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		t.Fatalf("%s has no BlobEndpoint=http://HOST:PORT/ACCOUNT", envConn)
	}
	c, err := net.DialTimeout("tcp", u.Host, 3*time.Second)
	if err != nil {
		missing(t, "Azurite", fmt.Sprintf("its BlobEndpoint %s does not answer: %v", endpoint, err))
	}
	c.Close()
	if containerName = os.Getenv("CLOUDMEM_TEST_BUCKET"); containerName == "" {
		missing(t, "Azurite", "CLOUDMEM_TEST_BUCKET is not set")
	}
	return conn, containerName
}

// connField returns the value of one NAME=VALUE field of a connection
// string.
func connField(conn, name string) string {
	for part := range strings.SplitSeq(conn, ";") {
		if v, ok := strings.CutPrefix(part, name+"="); ok {
			return v
		}
	}
	return ""
}

// openAzure opens a store over the test container, failing the test on
// error.
func openAzure(t *testing.T, containerName, prefix string, opts *azure.Options) blob.Store {
	t.Helper()
	s, err := azure.Open(t.Context(), containerName, prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// newAzureStore returns an empty store under a unique prefix of the test
// container, and deletes what the test left there.
func newAzureStore(t *testing.T) blob.Store {
	t.Helper()
	conn, containerName := azureServer(t)
	dir := "agent/" + uniquePrefix()
	s := openAzure(t, containerName, dir, &azure.Options{ConnectionString: conn})
	root := openAzure(t, containerName, "", &azure.Options{ConnectionString: conn})
	t.Cleanup(func() {
		// t.Context() is done by now.
		if err := blob.DeleteTree(context.Background(), root, dir); err != nil && !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("cleanup: %v", err)
		}
	})
	return s
}

// newAzureContainerStore returns a store over the whole of a new container,
// so that keys of the full blob.MaxKeyLen fit (Azure blob names are at most
// 1,024 characters, prefix included), and deletes the container afterwards.
func newAzureContainerStore(t *testing.T) blob.Store {
	t.Helper()
	conn, _ := azureServer(t)
	client, err := container.NewClientFromConnectionString(conn, "cloudmem-"+uniquePrefix(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Create(t.Context(), nil); err != nil {
		t.Fatalf("creating a container: %v", err)
	}
	t.Cleanup(func() {
		if _, err := client.Delete(context.Background(), nil); err != nil {
			t.Errorf("cleanup: deleting the container: %v", err)
		}
	})
	return openAzure(t, "", "", &azure.Options{Client: client})
}

// TestAzureConformance runs blobtest over a prefixed store (the usual
// deployment) and over a whole container (where the longest keys fit).
// Nothing else is skipped: Azurite enforces If-None-Match and If-Match on
// Put Blob and If-Match on Delete Blob, so the races prove the store.
// (Azurite's ETags are the time in milliseconds times a random number from
// 70,000 to 100,000, so two writes in the same millisecond get the same one
// about once in 30,000; Azure's never repeat.)
func TestAzureConformance(t *testing.T) {
	t.Run("prefix", func(t *testing.T) {
		blobtest.RunWith(t, newAzureStore, blobtest.Options{Skip: map[string]string{
			"MaxLenKey": "under a prefix, keys are shorter by the prefix: Azure blob names are at most 1,024 characters; " +
				"the container run proves the longest key",
		}})
	})
	t.Run("container", func(t *testing.T) {
		blobtest.Run(t, newAzureContainerStore)
	})
}

// TestAzureHandler runs the memory handler's SPEC cases over the store,
// each in a container of its own: the cases include 1,024-byte paths, which
// fit in no blob name under a prefix. (TestAzureSameOutputAsFile runs the
// handler over a prefixed store.)
func TestAzureHandler(t *testing.T) {
	memorytest.Run(t, newAzureContainerStore)
}

// TestAzureHandlerConcurrency runs the handler's races (16 writers, one
// Handler each) over one store.
func TestAzureHandlerConcurrency(t *testing.T) {
	memorytest.RunConcurrency(t, newAzureStore)
}

// TestAzureListOrder proves what the store corrects: Azurite lists blobs in
// UTF-16 code unit order (a character above U+FFFF sorts before one in
// U+E000..U+FFFF), and the store yields byte order anyway, here across a
// page boundary (1,000 names a page). It also proves why keys are escaped:
// Azurite stores '\' as '/'.
func TestAzureListOrder(t *testing.T) {
	conn, containerName := azureServer(t)
	dir := "agent/" + uniquePrefix()
	raw, err := container.NewClientFromConnectionString(conn, containerName, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := newAzureStore(t)
	ctx := t.Context()

	// The raw service: its order, and what it does to '\'.
	for _, name := range []string{"o/\uFF01", "o/\U0001F600", "o/\uE000", "o/a", `o/back\slash`} {
		body := streaming.NopCloser(strings.NewReader("x"))
		if _, err := raw.NewBlockBlobClient(dir+"/"+name).Upload(ctx, body, nil); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	listPrefix := dir + "/o/"
	pager := raw.NewListBlobsFlatPager(&container.ListBlobsFlatOptions{Prefix: &listPrefix})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Segment.BlobItems {
			names = append(names, strings.TrimPrefix(*item.Name, dir+"/o/"))
		}
	}
	if want := []string{"a", "back/slash", "\U0001F600", "\uE000", "\uFF01"}; !slices.Equal(names, want) {
		t.Fatalf("Azurite lists %q; this test (and the package doc) expect %q: UTF-16 order, '\\' stored as '/'", names, want)
	}
	if err := blob.DeleteTree(ctx, openAzure(t, containerName, dir, &azure.Options{ConnectionString: conn}), "o"); err != nil {
		t.Fatal(err)
	}

	// The store: 1,001 keys under an emoji, which Azurite lists first, then
	// the keys that byte order puts first.
	var keys []string
	for i := range 1001 {
		keys = append(keys, fmt.Sprintf("p/\U0001F600/%04d", i))
	}
	keys = append(keys, "p/\uE000", "p/\uFF01/x", "p/a", `p/back\slash`, "p/[bracket]", "p/\U0001F600")
	data := map[string][]byte{}
	for _, k := range keys {
		data[k] = []byte(k)
	}
	putAzure(t, s, data)
	want := slices.Clone(keys)
	slices.Sort(want)
	if utf16Order := sortedUTF16(keys); slices.Equal(utf16Order, want) {
		t.Fatal("test bug: the keys sort the same in both orders")
	}
	infos, err := blob.ListAll(ctx, s, "p/")
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(infos))
	for i, info := range infos {
		got[i] = info.Key
	}
	if !slices.Equal(got, want) {
		t.Fatalf("List(p/) =\n%q\nwant byte order\n%q", got, want)
	}
	back, _, err := s.Get(ctx, `p/back\slash`)
	if err != nil || string(back) != `p/back\slash` {
		t.Fatalf(`Get(p/back\slash) = %q, %v`, back, err)
	}
}

// putAzure writes every key of data with 16 workers.
func putAzure(t *testing.T, s blob.Store, data map[string][]byte) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(data))
	sem := make(chan struct{}, 16)
	for k, v := range data {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := s.Put(t.Context(), k, v, blob.Cond{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func sortedUTF16(keys []string) []string {
	out := slices.Clone(keys)
	slices.SortFunc(out, func(a, b string) int {
		return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
	})
	return out
}

// TestAzurePutRetry proves that a conditional Put whose first attempt
// landed is not reported as a conflict when the SDK retries it: the
// transport lets the first PUT reach Azurite, then shows the SDK a 503
// instead of the answer, so the SDK sends the PUT again and Azurite answers
// 409 (If-None-Match) or 412 (If-Match).
func TestAzurePutRetry(t *testing.T) {
	conn, containerName := azureServer(t)
	rt := &azureLostAnswer{}
	client, err := container.NewClientFromConnectionString(conn, containerName, &container.ClientOptions{
		ClientOptions: policy.ClientOptions{
			Transport: rt,
			Retry:     policy.RetryOptions{RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := "agent/" + uniquePrefix()
	s := openAzure(t, "", dir, &azure.Options{Client: client})
	t.Cleanup(func() {
		if err := blob.DeleteTree(context.Background(), s, "k"); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	ctx := t.Context()

	check := func(what string, info blob.Info, err error, data string, wantStatuses ...int) {
		t.Helper()
		if got := rt.take(); !slices.Equal(got, wantStatuses) {
			t.Fatalf("%s: Azurite answered the PUTs with %v, want %v", what, got, wantStatuses)
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
	check("Put(IfAbsent) retried after it landed", first, err, "one", http.StatusCreated, http.StatusConflict)

	rt.arm()
	info, err := s.Put(ctx, "k/a", []byte("two"), blob.Cond{IfVersion: first.Version})
	check("Put(IfVersion) retried after it landed", info, err, "two", http.StatusCreated, http.StatusPreconditionFailed)

	// A rival's write is still a conflict.
	_, err = s.Put(ctx, "k/a", []byte("rival"), blob.Cond{IfAbsent: true})
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfAbsent) of an existing key: error = %v, want ErrPrecondition", err)
	}
	_, err = s.Put(ctx, "k/a", []byte("rival"), blob.Cond{IfVersion: first.Version})
	if !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put(IfVersion) with a stale version: error = %v, want ErrPrecondition", err)
	}
	check("rival writes", info, nil, "two", http.StatusConflict, http.StatusPreconditionFailed)
}

// azureLostAnswer is a policy.Transporter that, once armed, sends the next
// PUT and replaces its successful answer with a 503, as if the connection
// broke after the write landed. It records the status Azurite gave every
// PUT.
type azureLostAnswer struct {
	mu       sync.Mutex
	armed    bool
	statuses []int
}

func (l *azureLostAnswer) arm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = true
}

// take returns the statuses recorded since the last take.
func (l *azureLostAnswer) take() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := l.statuses
	l.statuses = nil
	return got
}

func (l *azureLostAnswer) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.Method != http.MethodPut {
		return resp, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.statuses = append(l.statuses, resp.StatusCode)
	if !l.armed || resp.StatusCode != http.StatusCreated {
		return resp, nil
	}
	l.armed = false
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	const body = `<?xml version="1.0" encoding="utf-8"?>` +
		`<Error><Code>ServerBusy</Code><Message>the test transport dropped the answer</Message></Error>`
	return &http.Response{
		Status:        "503 Service Unavailable",
		StatusCode:    http.StatusServiceUnavailable,
		Proto:         resp.Proto,
		ProtoMajor:    resp.ProtoMajor,
		ProtoMinor:    resp.ProtoMinor,
		Header:        http.Header{"Content-Type": {"application/xml"}, "X-Ms-Error-Code": {"ServerBusy"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// TestAzureURL opens the store through storeurl, as the CLI does, with the
// connection string in AZURE_STORAGE_CONNECTION_STRING.
func TestAzureURL(t *testing.T) {
	conn, containerName := azureServer(t)
	t.Setenv(azure.ConnectionStringEnv, conn)
	dir := "agent/" + uniquePrefix()
	root := openAzure(t, containerName, "", nil)
	t.Cleanup(func() {
		if err := blob.DeleteTree(context.Background(), root, dir); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	ctx := t.Context()
	account, endpoint := connField(conn, "AccountName"), connField(conn, "BlobEndpoint")
	for i, raw := range []string{
		"azblob://" + containerName + "/" + dir + "?prefix=sub",
		"azblob://" + containerName + "/" + dir + "/sub?account=" + account + "&endpoint=" + url.QueryEscape(endpoint),
	} {
		s, err := storeurl.Open(ctx, raw)
		if err != nil {
			t.Fatalf("Open(%s): %v", raw, err)
		}
		text := fmt.Sprintf("hello %d", i)
		if _, err := s.Put(ctx, "notes.md", []byte(text), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
		got, _, err := root.Get(ctx, dir+"/sub/notes.md")
		if err != nil || string(got) != text {
			t.Fatalf("through %s: blob %s/sub/notes.md = %q, %v; want %q", raw, dir, got, err, text)
		}
	}
	for raw, want := range map[string]string{
		"azblob://" + containerName + "?acount=x":     `storeurl: azblob: unknown URL parameter "acount"`,
		"azblob://" + containerName + "?account=prod": `azure: account "prod" differs from the connection string's AccountName "` + account + `"`,
	} {
		if _, err := storeurl.Open(ctx, raw); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Open(%s): error = %v, want one starting %q", raw, err, want)
		}
	}
}

// azureSeed is what both stores hold before the command stream: enough
// files in one directory that listing it takes two pages, and names whose
// order or escaping differs on Azure.
func azureSeed() map[string][]byte {
	seed := map[string][]byte{
		"projects/alpha/notes.md":     []byte("# Alpha\n\n- kickoff on Monday\n- owner: Dana\n"),
		"projects/alpha/.draft":       []byte("hidden draft\n"),
		"projects/beta/todo.txt":      []byte("one\ntwo\nthree\n"),
		"projects/notes [draft].md":   []byte("bracketed\n"),
		"emoji/\U0001F600 smile.md":   []byte("a character above U+FFFF\n"),
		"emoji/\uFF01 fullwidth.md":   []byte("a character in U+E000..U+FFFF\n"),
		"emoji/\U0001F600/nested.txt": []byte("under an emoji directory\n"),
		"bin/blob.dat":                {0x00, 0xff, 0xfe, 'x', '\n'},
	}
	for i := range 1005 {
		seed[fmt.Sprintf("log/%04d.md", i)] = fmt.Appendf(nil, "entry %d\n", i)
	}
	return seed
}

// azureCommands touches every command, its errors, hidden names, escaped
// and reordered names, and a directory of two pages.
var azureCommands = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/projects"}`,
	`{"command":"view","path":"/memories/emoji"}`,
	`{"command":"view","path":"/memories/projects/alpha/notes.md"}`,
	`{"command":"view","path":"/memories/projects/notes [draft].md"}`,
	`{"command":"view","path":"/memories/projects/beta/todo.txt","view_range":[2,3]}`,
	`{"command":"view","path":"/memories/log/0999.md"}`,
	`{"command":"view","path":"/memories/bin/blob.dat"}`,
	`{"command":"view","path":"/memories/missing.md"}`,
	`{"command":"create","path":"/memories/projects/alpha/notes.md","file_text":"clobber"}`,
	`{"command":"create","path":"/memories/new/deep/file.md","file_text":"first line\nsecond line\n"}`,
	`{"command":"create","path":"/memories/unicode/日本語 ファイル.md","file_text":"héllo wörld\n"}`,
	`{"command":"create","path":"/memories/[brackets]/[[x]].md","file_text":"escaped twice\n"}`,
	`{"command":"create","path":"/memories/projects/alpha/notes.md/child","file_text":"x"}`,
	`{"command":"create","path":"/memories/projects","file_text":"x"}`,
	`{"command":"create","path":"/memories/back\\slash.md","file_text":"x"}`,
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
	`{"command":"rename","old_path":"/memories/emoji","new_path":"/memories/[brackets]/emoji"}`,
	`{"command":"rename","old_path":"/memories/nothing","new_path":"/memories/else"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/[brackets]"}`,
	`{"command":"view","path":"/memories/[brackets]/[[x]].md"}`,
	`{"command":"delete","path":"/memories/log"}`,
	`{"command":"delete","path":"/memories/archive/beta/todo.txt"}`,
	`{"command":"delete","path":"/memories/archive"}`,
	`{"command":"delete","path":"/memories"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"frobnicate","path":"/memories"}`,
	`not json`,
}

// TestAzureSameOutputAsFile runs one command stream through memory.Handler
// over a local-directory store and over an Azure store opened from its URL
// as the CLI opens it (azblob://CONTAINER/PREFIX, the connection string in
// AZURE_STORAGE_CONNECTION_STRING), from the same seed, and requires
// byte-identical results and final contents.
func TestAzureSameOutputAsFile(t *testing.T) {
	conn, containerName := azureServer(t)
	t.Setenv(azure.ConnectionStringEnv, conn)
	dir := "agent/" + uniquePrefix()
	azureStore, err := storeurl.Open(t.Context(), "azblob://"+containerName+"/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	root := openAzure(t, containerName, "", nil)
	t.Cleanup(func() {
		if err := blob.DeleteTree(context.Background(), root, dir); err != nil && !errors.Is(err, blob.ErrNotExist) {
			t.Errorf("cleanup: %v", err)
		}
	})
	fileStore, err := file.Open(t.Context(), t.TempDir(), &file.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}

	fileResults, fileContents := runAzureSession(t, fileStore)
	azureResults, azureContents := runAzureSession(t, azureStore)
	for i := range azureCommands {
		if fileResults[i] != azureResults[i] {
			t.Errorf("command %d %s:\nfile store:  %s\nazure store: %s", i, azureCommands[i], fileResults[i], azureResults[i])
		}
	}
	if !maps.Equal(fileContents, azureContents) {
		t.Errorf("final contents differ:\nfile store:  %q\nazure store: %q", fileContents, azureContents)
	}
	// Guard against a stream that proves nothing: it has successes and
	// errors, and reached the listings it was written for.
	all := strings.Join(fileResults, "\n")
	for _, want := range []string{`"IsError":true`, `"IsError":false`, "Tuesday", "one and a half", "/memories/log/1004.md",
		"\U0001F600 smile.md", "[[x]].md", "escaped twice"} {
		if !strings.Contains(all, want) {
			t.Errorf("the results do not contain %q:\n%s", want, all)
		}
	}
}

// runAzureSession seeds s, runs azureCommands through a Handler over it
// and returns each result as a JSON line, and the store's final contents.
func runAzureSession(t *testing.T, s blob.Store) (results []string, contents map[string]string) {
	t.Helper()
	ctx := t.Context()
	putAzure(t, s, azureSeed())
	h, err := memory.New(s, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range azureCommands {
		line, err := json.Marshal(h.Execute(ctx, []byte(cmd)))
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, string(line))
	}
	infos, err := blob.ListAll(ctx, s, "")
	if err != nil {
		t.Fatal(err)
	}
	contents = map[string]string{}
	for _, info := range infos {
		data, _, err := s.Get(ctx, info.Key)
		if err != nil {
			t.Fatal(err)
		}
		contents[info.Key] = string(data)
	}
	return results, contents
}
