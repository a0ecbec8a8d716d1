package integration

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/cloudmem/cloudmem/backends/azure"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
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
	return conn, testBucket(t, "Azurite")
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
	cleanUpTree(t, root, dir)
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
	memorytest.RunWith(t, newAzureContainerStore, parallelCases)
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
	putAll(t, s, data)
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
	back, _, err := s.Get(ctx, `p/back\slash`, blob.MaxObjectBytes)
	if err != nil || string(back) != `p/back\slash` {
		t.Fatalf(`Get(p/back\slash) = %q, %v`, back, err)
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
// landed is not reported as a conflict when the SDK retries it
// (checkPutRetry): the transport lets the first PUT reach Azurite, then
// shows the SDK a 503 instead of the answer, so the SDK sends the PUT again
// and Azurite answers 409 (If-None-Match) or 412 (If-Match).
func TestAzurePutRetry(t *testing.T) {
	conn, containerName := azureServer(t)
	const body = `<?xml version="1.0" encoding="utf-8"?>` +
		`<Error><Code>ServerBusy</Code><Message>the test transport dropped the answer</Message></Error>`
	rt := &lostAnswer{
		status: http.StatusServiceUnavailable,
		header: http.Header{"Content-Type": {"application/xml"}, "X-Ms-Error-Code": {"ServerBusy"}},
		body:   body,
	}
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
	cleanUpTree(t, s, "k")
	checkPutRetry(t, s, rt, "Azurite", putStatuses{
		method:  http.MethodPut,
		created: http.StatusCreated,
		exists:  http.StatusConflict,
		stale:   http.StatusPreconditionFailed,
		checks:  true,
	})
}

// TestAzurePutLostAnswerUnderRival: see checkLostAnswerUnderRival.
func TestAzurePutLostAnswerUnderRival(t *testing.T) {
	conn, containerName := azureServer(t)
	rt := &lostAnswer{
		status: http.StatusServiceUnavailable,
		header: http.Header{"Content-Type": {"application/xml"}, "X-Ms-Error-Code": {"ServerBusy"}},
		body: `<?xml version="1.0" encoding="utf-8"?>` +
			`<Error><Code>ServerBusy</Code><Message>the test transport dropped the answer</Message></Error>`,
	}
	client, err := container.NewClientFromConnectionString(conn, containerName, &container.ClientOptions{
		ClientOptions: policy.ClientOptions{Transport: rt},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := "agent/" + uniquePrefix()
	s := openAzure(t, "", dir, &azure.Options{Client: client})
	cleanUpTree(t, s, "k")
	rival := openAzure(t, containerName, dir, &azure.Options{ConnectionString: conn})
	checkLostAnswerUnderRival(t, s, rival, rt, http.MethodPut)
}

// TestAzureURL opens the store through storeurl, as the CLI does, with the
// connection string in AZURE_STORAGE_CONNECTION_STRING.
func TestAzureURL(t *testing.T) {
	conn, containerName := azureServer(t)
	t.Setenv(azure.ConnectionStringEnv, conn)
	dir := "agent/" + uniquePrefix()
	root := openAzure(t, containerName, "", nil)
	cleanUpTree(t, root, dir)
	ctx := t.Context()
	account, endpoint := connField(conn, "AccountName"), connField(conn, "BlobEndpoint")
	for i, raw := range []string{
		"azblob://" + containerName + "/" + dir + "?prefix=sub",
		"azblob://" + containerName + "/" + dir + "/sub?account=" + account + "&endpoint=" + url.QueryEscape(endpoint),
	} {
		s := openURL(t, raw)
		text := fmt.Sprintf("hello %d", i)
		if _, err := s.Put(ctx, "notes.md", []byte(text), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
		got, _, err := root.Get(ctx, dir+"/sub/notes.md", blob.MaxObjectBytes)
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

// TestAzureSameOutputAsFile runs the session of session_test.go through
// memory.Handler over a local-directory store and over an Azure store
// opened from its URL as the CLI opens it (azblob://CONTAINER/PREFIX, the
// connection string in AZURE_STORAGE_CONNECTION_STRING), and requires
// byte-identical results and final contents. The session's names include
// ones that Azurite lists in another order (above U+FFFF against
// U+E000..U+FFFF) and ones the store escapes ('['), and a directory whose
// listing takes two pages.
func TestAzureSameOutputAsFile(t *testing.T) {
	conn, containerName := azureServer(t)
	t.Setenv(azure.ConnectionStringEnv, conn)
	dir := "agent/" + uniquePrefix()
	azureStore := openURL(t, "azblob://"+containerName+"/"+dir)
	cleanUpTree(t, openAzure(t, containerName, "", nil), dir)
	sameOutputAsFile(t, "Azure", azureStore)
}
