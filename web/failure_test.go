package web_test

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/web"
)

// failing is a store whose calls fail, once broken, with an error that
// names what no page may show: a host and a bucket.
type failing struct {
	blob.Forward
	broken atomic.Bool
}

var errLeak = errors.New("dial tcp 10.1.2.3:9000: bucket secret-bucket: connection refused")

func (f *failing) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if f.broken.Load() {
		return nil, blob.Info{}, errLeak
	}
	return f.Inner.Get(ctx, key, limit)
}

func (f *failing) Stat(ctx context.Context, key string) (blob.Info, error) {
	if f.broken.Load() {
		return blob.Info{}, errLeak
	}
	return f.Inner.Stat(ctx, key)
}

func (f *failing) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if f.broken.Load() {
		return blob.Info{}, errLeak
	}
	return f.Inner.Put(ctx, key, data, c)
}

func (f *failing) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	if f.broken.Load() {
		return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, errLeak) }
	}
	return f.Inner.List(ctx, prefix)
}

// TestStorageFailure: a store that fails gives every page a short text
// that names no host, bucket or key, and changes nothing.
func TestStorageFailure(t *testing.T) {
	st := &failing{Forward: blob.Forward{Inner: mem.New(nil)}}
	hs, err := history.New(st, &history.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(hs, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h.Create(ctx, "/memories/a.md", "one\n")
	h.StrReplace(ctx, "/memories/a.md", "one", "two")
	vs, _ := hs.History(ctx, "a.md")
	srv, err := web.New(web.Options{History: hs, Logger: quiet, Actor: "lead"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, hs: hs, h: h, srv: srv}
	csrf := csrfOf(t, f.get("/restore?path=/memories/a.md&version="+vs[0].ID).Body.String())
	st.broken.Store(true)
	const storage = `<p class="error" role="alert">The memory storage failed, so this page could not be shown. Try again; the server&#39;s log has the details.</p>`
	for _, c := range []struct {
		target string
		status int
		text   string
	}{
		{"/tree", http.StatusBadGateway, `<p class="error" role="alert">The memory storage failed: the storage backend returned an error</p>`},
		{"/file?path=/memories/a.md", http.StatusBadGateway, `<p class="error" role="alert">The memory storage failed: the storage backend returned an error</p>`},
		{"/history?path=/memories/a.md", http.StatusBadGateway, storage},
		{"/diff?path=/memories/a.md&from=" + vs[0].ID, http.StatusBadGateway, storage},
		{"/audit", http.StatusBadGateway, storage},
		{"/search?q=two", http.StatusBadGateway, storage},
		{"/restore?path=/memories/a.md&version=" + vs[0].ID, http.StatusBadGateway, storage},
	} {
		w := f.get(c.target)
		want(t, w, c.status, c.text)
		refuse(t, w, "10.1.2.3", "secret-bucket", "a.md@", ".cloudmem")
	}
	for _, action := range []string{"/restore", "/redact"} {
		w := f.post(action, url.Values{"path": {"/memories/a.md"}, "version": {vs[0].ID}, "csrf": {csrf}}, nil)
		want(t, w, http.StatusBadGateway, storage)
		refuse(t, w, "10.1.2.3", "secret-bucket")
	}
	st.broken.Store(false)
	after, _ := hs.History(ctx, "a.md")
	if len(after) != 2 || after[0].Redacted != nil {
		t.Errorf("a failed action changed the history: %+v", after)
	}
}

// TestConcurrentRestores: people who restore one version at once each get
// either the restore or the conflict; every restore acknowledged is one new
// version, and the file holds the restored content.
func TestConcurrentRestores(t *testing.T) {
	f := newFixture(t, web.Options{})
	f.create("agent", "/memories/a.md", "good\n")
	f.replace("agent", "/memories/a.md", "good", "bad")
	ids := f.ids("a.md")
	csrf := csrfOf(t, f.get("/restore?path=/memories/a.md&version="+ids[0]).Body.String())
	const n = 8
	var ok, conflict, other atomic.Int32
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			w := f.post("/restore", url.Values{"path": {"/memories/a.md"}, "version": {ids[0]}, "csrf": {csrf}}, nil)
			switch w.Code {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusConflict:
				conflict.Add(1)
			default:
				other.Add(1)
				t.Errorf("a restore: %d\n%s", w.Code, w.Body.String())
			}
		})
	}
	time.Sleep(10 * time.Millisecond)
	close(start)
	wg.Wait()
	if ok.Load() < 1 || ok.Load()+conflict.Load() != n {
		t.Errorf("%d restored, %d conflicts, %d other, of %d", ok.Load(), conflict.Load(), other.Load(), n)
	}
	if got := len(f.ids("a.md")); got != 2+int(ok.Load()) {
		t.Errorf("%d versions after %d acknowledged restores, want %d", got, ok.Load(), 2+ok.Load())
	}
	if data, _ := f.h.ReadFile(context.Background(), "/memories/a.md"); string(data) != "good\n" {
		t.Errorf("after the restores: %q", data)
	}
}

// recordsFailing fails, once broken, every List and Get of the history
// records, and nothing else.
type recordsFailing struct{ failing }

func (f *recordsFailing) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if strings.HasPrefix(key, history.Namespace) {
		return f.failing.Get(ctx, key, limit)
	}
	return f.Inner.Get(ctx, key, limit)
}

func (f *recordsFailing) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	if strings.HasPrefix(prefix, history.Namespace) {
		return f.failing.List(ctx, prefix)
	}
	return f.Inner.List(ctx, prefix)
}

// TestTreeAuthorsFailure: when the history records cannot be read, the
// tree shows its files without authors, and the failure is not remembered:
// the next view shows them.
func TestTreeAuthorsFailure(t *testing.T) {
	st := &recordsFailing{failing{Forward: blob.Forward{Inner: mem.New(nil)}}}
	hs, err := history.New(st, &history.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h, err := memory.New(hs, memory.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if res := h.Create(memory.WithActor(context.Background(), "agent"), "/memories/a.md", "one\n"); res.Err != nil {
		t.Fatal(res.Text)
	}
	srv, err := web.New(web.Options{History: hs, Logger: quiet, Actor: "lead"})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, hs: hs, h: h, srv: srv}
	row := `<tr class="file"><td><a href="/file?path=%2fmemories%2fa.md">a.md</a></td><td>4 bytes</td>`
	st.broken.Store(true)
	w := f.get("/tree")
	want(t, w, http.StatusOK, row)
	refuse(t, w, "agent", "10.1.2.3", "secret-bucket")
	if !strings.Contains(w.Body.String(), "<td></td></tr>\n</tbody>") {
		t.Errorf("the tree shows an author it could not read:\n%s", w.Body.String())
	}
	st.broken.Store(false)
	if w := f.get("/tree"); !strings.Contains(w.Body.String(), "<td>agent</td></tr>\n</tbody>") {
		t.Errorf("the tree does not show the author once the records read again:\n%s", w.Body.String())
	}
}
