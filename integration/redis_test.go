package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
	"github.com/cloudmem/cloudmem/storeurl"
)

// The Redis tests run against the server emulators.sh starts, which
// CLOUDMEM_TEST_REDIS_ADDR names (host:port).

// redisClient returns a client for the test server, closed when the test
// ends.
func redisClient(t *testing.T) *goredis.Client {
	t.Helper()
	addr := server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR")
	client := goredis.NewClient(&goredis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { client.Close() })
	return client
}

// newRedisStore returns an empty store under a unique prefix, and removes
// its keys when the test ends.
func newRedisStore(t *testing.T, client goredis.UniversalClient) blob.Store {
	t.Helper()
	prefix := uniquePrefix()
	s, err := redis.Open(t.Context(), client, &redis.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropRedisPrefix(t, client, prefix) })
	return s
}

// dropRedisPrefix deletes every key of the store with this prefix. Only a
// test may SCAN; the store itself never does.
func dropRedisPrefix(t *testing.T, client goredis.UniversalClient, prefix string) {
	ctx := context.Background() // t.Context() is done by now
	iter := client.Scan(ctx, 0, "cm:{"+prefix+"}:*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Errorf("cleanup: SCAN: %v", err)
		return
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := client.Del(ctx, keys[:n]...).Err(); err != nil {
			t.Errorf("cleanup: DEL: %v", err)
			return
		}
		keys = keys[n:]
	}
}

func TestRedisConformance(t *testing.T) {
	client := redisClient(t)
	blobtest.Run(t, func(t *testing.T) blob.Store { return newRedisStore(t, client) })
}

// TestRedisMemorySpec runs the memory tool's SPEC suite, then its races,
// through memory.Handler over Redis stores.
func TestRedisMemorySpec(t *testing.T) {
	client := redisClient(t)
	newStore := func(t *testing.T) blob.Store { return newRedisStore(t, client) }
	t.Run("spec", func(t *testing.T) { memorytest.Run(t, newStore) })
	t.Run("concurrency", func(t *testing.T) { memorytest.RunConcurrency(t, newStore) })
}

// TestRedisRenameNeverHalfDone lists a store in a loop, over a client of
// its own, while another client moves a 200-file directory back and forth,
// or deletes it: every listing must show the whole tree at exactly one
// place (for the delete: whole or gone).
func TestRedisRenameNeverHalfDone(t *testing.T) {
	const files, rounds = 200, 40
	t.Run("rename", func(t *testing.T) {
		writer, r := newRacingPair(t, files)
		r.fill(t, writer, "old")
		listings, err := r.watchWhile(t, func(c map[string]int) bool {
			return len(c) == 1 && (c["old"] == files || c["new"] == files)
		}, func() error {
			for range rounds {
				if err := writer.(blob.Renamer).Rename(t.Context(), "old", "new"); err != nil {
					return err
				}
				if err := writer.(blob.Renamer).Rename(t.Context(), "new", "old"); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d renames of %d files, %d listings, none half done", 2*rounds, files, listings)
	})
	t.Run("delete tree", func(t *testing.T) {
		writer, r := newRacingPair(t, files)
		for range rounds / 4 {
			r.fill(t, writer, "doomed")
			_, err := r.watchWhile(t, func(c map[string]int) bool {
				return len(c) == 0 || (len(c) == 1 && c["doomed"] == files)
			}, func() error {
				return writer.(blob.TreeDeleter).DeleteTree(t.Context(), "doomed")
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// racingReader lists one store in a loop over a client of its own.
type racingReader struct {
	store blob.Store
	files int // the size of the tree the writer moves
}

// newRacingPair returns a new, empty store holding only keep.md, opened
// twice over two clients: the writer and the reader.
func newRacingPair(t *testing.T, files int) (blob.Store, *racingReader) {
	t.Helper()
	prefix := uniquePrefix()
	writerClient, readerClient := redisClient(t), redisClient(t)
	writer, err := redis.Open(t.Context(), writerClient, &redis.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropRedisPrefix(t, writerClient, prefix) })
	reader, err := redis.Open(t.Context(), readerClient, &redis.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Put(t.Context(), "keep.md", []byte("bystander"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	return writer, &racingReader{store: reader, files: files}
}

// fill writes the tree dir/f000.md ... through s.
func (r *racingReader) fill(t *testing.T, s blob.Store, dir string) {
	t.Helper()
	for i := range r.files {
		if _, err := s.Put(t.Context(), fmt.Sprintf("%s/f%03d.md", dir, i), []byte("x"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
}

// census lists the whole store once and counts the files under each
// top-level directory; keep.md must be there every time.
func (r *racingReader) census(ctx context.Context) (map[string]int, error) {
	counts := map[string]int{}
	kept := false
	for info, err := range r.store.List(ctx, "") {
		if err != nil {
			return nil, err
		}
		if info.Key == "keep.md" {
			kept = true
			continue
		}
		dir, _, _ := strings.Cut(info.Key, "/")
		counts[dir]++
	}
	if !kept {
		return nil, errors.New("keep.md is missing from the listing")
	}
	return counts, nil
}

// watchWhile lists in a loop; once the first listing is done it runs write,
// and it stops listing when write returns. It returns the number of
// listings made, and the error of write or else the first listing that ok
// rejects.
func (r *racingReader) watchWhile(t *testing.T, ok func(map[string]int) bool, write func() error) (int, error) {
	started, stop := make(chan struct{}), make(chan struct{})
	var listings int
	var watchErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer func() {
			if listings == 0 {
				close(started) // failed at once: let write run anyway
			}
		}()
		for ; ; listings++ {
			if listings == 1 {
				close(started)
			}
			select {
			case <-stop:
				return
			default:
			}
			counts, err := r.census(t.Context())
			if err != nil {
				watchErr = err
				return
			}
			if !ok(counts) {
				watchErr = fmt.Errorf("a reader saw the tree half done: listing %d counted %v", listings, counts)
				return
			}
		}
	})
	<-started
	writeErr := write()
	close(stop)
	wg.Wait()
	if writeErr != nil {
		return listings, writeErr
	}
	return listings, watchErr
}

// redisSession is one agent's session: every command, successes and
// errors, over nested directories, hidden files and unicode names. wantErrors
// is how many of them fail.
var redisSession = []string{
	`{"command":"view","path":"/memories"}`,
	`{"command":"create","path":"/memories/notes.md","file_text":"Prefers tea.\nLives in Lyon.\n"}`,
	`{"command":"create","path":"/memories/projects/cloudmem/plan.md","file_text":"# Plan\n- redis\n- s3\n- gcs\n"}`,
	`{"command":"create","path":"/memories/projects/cloudmem/.draft","file_text":"hidden"}`,
	`{"command":"create","path":"/memories/projects/café/日本語.md","file_text":"unicode ✓\n"}`,
	`{"command":"create","path":"/memories/node_modules/x.js","file_text":"skip me"}`,
	`{"command":"create","path":"/memories/notes.md","file_text":"again"}`,
	`{"command":"create","path":"/memories/notes.md/inner.md","file_text":"under a file"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"view","path":"/memories/projects"}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md","view_range":[2,3]}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md","view_range":[9,10]}`,
	`{"command":"str_replace","path":"/memories/projects/cloudmem/plan.md","old_str":"- s3","new_str":"- s3 (MinIO)"}`,
	`{"command":"str_replace","path":"/memories/projects/cloudmem/plan.md","old_str":"- ","new_str":"* "}`,
	`{"command":"str_replace","path":"/memories/projects/cloudmem/plan.md","old_str":"azure","new_str":"x"}`,
	`{"command":"insert","path":"/memories/projects/cloudmem/plan.md","insert_line":1,"insert_text":"Owner: me"}`,
	`{"command":"insert","path":"/memories/notes.md","insert_line":99,"insert_text":"late"}`,
	`{"command":"view","path":"/memories/projects/cloudmem/plan.md"}`,
	`{"command":"rename","old_path":"/memories/notes.md","new_path":"/memories/people/me.md"}`,
	`{"command":"rename","old_path":"/memories/projects/cloudmem","new_path":"/memories/archive/cloudmem"}`,
	`{"command":"rename","old_path":"/memories/projects","new_path":"/memories/archive"}`,
	`{"command":"rename","old_path":"/memories/missing","new_path":"/memories/elsewhere"}`,
	`{"command":"view","path":"/memories"}`,
	`{"command":"delete","path":"/memories/archive"}`,
	`{"command":"delete","path":"/memories/archive"}`,
	`{"command":"delete","path":"/memories/people/me.md"}`,
	`{"command":"view","path":"/memories/people/me.md"}`,
	`{"command":"view","path":"/memories/../etc/passwd"}`,
	`{"command":"view","path":"/memories"}`,
}

const redisSessionErrors = 11

// TestRedisSameOutputAsFileStore runs one session through a memory.Handler
// over the local-directory store and over Redis: every result must be
// identical, byte for byte.
func TestRedisSameOutputAsFileStore(t *testing.T) {
	redisStore := newRedisStore(t, redisClient(t))
	fileStore, err := file.Open(t.Context(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(s blob.Store) []memory.Result {
		h, err := memory.New(s, memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var out []memory.Result
		for _, cmd := range redisSession {
			out = append(out, h.Execute(t.Context(), []byte(cmd)))
		}
		return out
	}
	want, got := run(fileStore), run(redisStore)
	failures := 0
	for i := range want {
		if want[i].IsError {
			failures++
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("command %d %s:\nredis: is_error=%v\n%s\nfile:  is_error=%v\n%s",
				i, redisSession[i], got[i].IsError, got[i].Text, want[i].IsError, want[i].Text)
		}
	}
	if failures != redisSessionErrors {
		t.Errorf("%d commands failed on the file store, want %d: the session no longer tests what it says", failures, redisSessionErrors)
	}
}

// TestRedisURL opens stores with storeurl, as a configuration string would:
// prefixes (including one that extends another) and databases keep stores
// apart, and the shared parameters work.
func TestRedisURL(t *testing.T) {
	addr := server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR")
	client := redisClient(t)
	db1 := goredis.NewClient(&goredis.Options{Addr: addr, DB: 1})
	t.Cleanup(func() { db1.Close() })
	p := uniquePrefix()
	open := func(rawURL string) blob.Store {
		t.Helper()
		s, err := storeurl.Open(t.Context(), rawURL)
		if err != nil {
			t.Fatalf("storeurl.Open(%s): %v", rawURL, err)
		}
		t.Cleanup(func() {
			if c, ok := s.(io.Closer); ok {
				c.Close()
			}
		})
		return s
	}
	stores := map[string]blob.Store{ // by the content each will hold
		"a":        open("redis://" + addr + "/0?prefix=" + p),
		"a:b":      open("redis://" + addr + "?prefix=" + p + ":b"),
		"a/sub":    open("redis://" + addr + "/0?prefix=" + p + "/sub"),
		"a in db1": open("redis://" + addr + "/1?prefix=" + p),
	}
	for _, q := range []string{p, p + ":b", p + "/sub"} {
		t.Cleanup(func() { dropRedisPrefix(t, client, q) })
	}
	t.Cleanup(func() { dropRedisPrefix(t, db1, p) })
	for data, s := range stores {
		if _, err := s.Put(t.Context(), "k", []byte(data), blob.Cond{IfAbsent: true}); err != nil {
			t.Fatalf("Put in store %q: %v", data, err)
		}
	}
	for data, s := range stores {
		infos, err := blob.ListAll(t.Context(), s, "")
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Get(t.Context(), "k")
		if err != nil || string(got) != data || len(infos) != 1 {
			t.Errorf("store %q: Get(k) = %q, %v; %d keys listed; want only its own k", data, got, err, len(infos))
		}
	}

	ro := open("redis://" + addr + "/0?readonly=true&prefix=" + p)
	if got, _, err := ro.Get(t.Context(), "k"); err != nil || string(got) != "a" {
		t.Errorf("read-only store: Get(k) = %q, %v; want \"a\"", got, err)
	}
	if _, err := ro.Put(t.Context(), "k", []byte("x"), blob.Cond{}); !errors.Is(err, blob.ErrReadOnly) {
		t.Errorf("read-only store: Put error = %v, want ErrReadOnly", err)
	}

	_, err := storeurl.Open(t.Context(), "redis://"+addr+"/0?prefix=x&colour=red")
	if err == nil || !strings.Contains(err.Error(), `unknown URL parameter "colour"`) {
		t.Errorf("unknown parameter: error = %v, want one naming colour", err)
	}
	_, err = storeurl.Open(t.Context(), "redis://"+addr+"/0?prefix=a{b}")
	if !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("prefix with braces: error = %v, want ErrInvalidKey", err)
	}

	closing := open("redis://" + addr + "/0?prefix=" + p)
	if err := closing.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := closing.Stat(t.Context(), "k"); !errors.Is(err, goredis.ErrClosed) {
		t.Errorf("Stat after Close: error = %v, want go-redis' ErrClosed", err)
	}
}

// TestRedisPassword checks REDIS_PASSWORD and that no error shows the
// password, with a user made for the test (Redis 6 ACL).
func TestRedisPassword(t *testing.T) {
	addr := server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR")
	client := redisClient(t)
	user, password, p := "cloudmem-"+uniquePrefix(), "pw-"+rand.Text(), uniquePrefix()
	if err := client.Do(t.Context(), "ACL", "SETUSER", user, "on", ">"+password, "~*", "+@all").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() {
		if err := client.Do(context.Background(), "ACL", "DELUSER", user).Err(); err != nil {
			t.Errorf("cleanup: ACL DELUSER: %v", err)
		}
		dropRedisPrefix(t, client, p)
	})
	rawURL := "redis://" + user + "@" + addr + "/0?prefix=" + p

	t.Setenv(redis.PasswordEnv, password)
	s, err := storeurl.Open(t.Context(), rawURL)
	if err != nil {
		t.Fatalf("with %s set: %v", redis.PasswordEnv, err)
	}
	defer s.(io.Closer).Close()
	if _, err := s.Put(t.Context(), "k", []byte("v"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}

	wrong := "wrong-" + password
	t.Setenv(redis.PasswordEnv, wrong)
	for _, u := range []string{rawURL, "redis://" + user + ":" + wrong + "@" + addr + "/0?prefix=" + p} {
		_, err := storeurl.Open(t.Context(), u)
		var redisErr goredis.Error
		if !errors.As(err, &redisErr) || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Errorf("wrong password: error = %v, want go-redis' WRONGPASS error", err)
		}
		if err != nil && strings.Contains(err.Error(), wrong) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// dropFirstReply makes go-redis resend one script call whose first attempt
// the server ran: the connection breaks after the call is sent, before its
// reply is read, and go-redis retries on a new connection.
type dropFirstReply struct {
	armed atomic.Bool  // break the next connection that sends EVALSHA
	dials atomic.Int32 // connections made
}

func (d *dropFirstReply) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.dials.Add(1)
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &breakingConn{Conn: c, d: d}, nil
}

type breakingConn struct {
	net.Conn
	d      *dropFirstReply
	broken atomic.Bool
}

func (c *breakingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err == nil && bytes.Contains(bytes.ToLower(p), []byte("evalsha")) && c.d.armed.CompareAndSwap(true, false) {
		c.broken.Store(true)
	}
	return n, err
}

func (c *breakingConn) Read(p []byte) (int, error) {
	if c.broken.Load() {
		time.Sleep(100 * time.Millisecond) // time for the server to run the script
		c.Conn.Close()
		return 0, io.EOF
	}
	return c.Conn.Read(p)
}

// TestRedisRetriedWrite checks that a write resent by go-redis after a
// broken connection reports the outcome of its first attempt (which the
// server ran) instead of running again: a create is not "already exists", a
// delete or rename not "does not exist".
func TestRedisRetriedWrite(t *testing.T) {
	addr := server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR")
	faults := &dropFirstReply{}
	client := goredis.NewClient(&goredis.Options{Addr: addr, Dialer: faults.dial, MaxRetries: 3})
	t.Cleanup(func() { client.Close() })
	p := uniquePrefix()
	s, err := redis.Open(t.Context(), client, &redis.Options{Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropRedisPrefix(t, client, p) })
	ctx := t.Context()

	// resent runs op with the fault armed and checks that it fired.
	resent := func(what string, op func() error) {
		t.Helper()
		faults.armed.Store(true)
		before := faults.dials.Load()
		if err := op(); err != nil {
			t.Fatalf("%s, resent after a broken connection: %v", what, err)
		}
		if faults.armed.Load() || faults.dials.Load() == before {
			t.Fatalf("%s: the fault did not fire (armed %v, %d new connections)", what, faults.armed.Load(), faults.dials.Load()-before)
		}
	}
	var info blob.Info
	resent("Put(IfAbsent)", func() (err error) {
		info, err = s.Put(ctx, "k", []byte("one"), blob.Cond{IfAbsent: true})
		return err
	})
	if st, err := s.Stat(ctx, "k"); err != nil || st.Version != info.Version {
		t.Fatalf("Stat(k) = version %q, %v; want Put's %q", st.Version, err, info.Version)
	}
	resent("Put(IfVersion)", func() (err error) {
		info, err = s.Put(ctx, "k", []byte("two"), blob.Cond{IfVersion: info.Version})
		return err
	})
	resent("Rename", func() error { return s.(blob.Renamer).Rename(ctx, "k", "moved") })
	resent("Delete(IfVersion)", func() error {
		st, err := s.Stat(ctx, "moved")
		if err != nil {
			return err
		}
		return s.Delete(ctx, "moved", blob.Cond{IfVersion: st.Version})
	})
	for _, k := range []string{"dir/a", "dir/b"} {
		if _, err := s.Put(ctx, k, []byte(k), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	resent("DeleteTree", func() error { return s.(blob.TreeDeleter).DeleteTree(ctx, "dir") })
	if infos, err := blob.ListAll(ctx, s, ""); err != nil || len(infos) != 0 {
		t.Fatalf("after the deletes: List = %v, %v; want nothing", infos, err)
	}
}

// stallingConn delays every read by two seconds while stall is set, as a
// server that has stopped answering would.
type stallingConn struct {
	net.Conn
	stall *atomic.Bool
}

func (c *stallingConn) Read(p []byte) (int, error) {
	if c.stall.Load() {
		time.Sleep(2 * time.Second)
	}
	return c.Conn.Read(p)
}

// TestRedisCancelInFlight checks that a call whose context is cancelled
// while it waits for the server returns at once with context.Canceled,
// even over a client without ContextTimeoutEnabled.
func TestRedisCancelInFlight(t *testing.T) {
	addr := server(t, "Redis", "CLOUDMEM_TEST_REDIS_ADDR")
	var stall atomic.Bool
	client := goredis.NewClient(&goredis.Options{Addr: addr, Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &stallingConn{Conn: c, stall: &stall}, nil
	}})
	t.Cleanup(func() { client.Close() })
	p := uniquePrefix()
	s, err := redis.Open(t.Context(), client, &redis.Options{Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropRedisPrefix(t, client, p) })
	if _, err := s.Put(t.Context(), "dir/k", []byte("v"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}

	stall.Store(true)
	defer stall.Store(false)
	for name, op := range map[string]func(context.Context) error{
		"Get": func(ctx context.Context) error { _, _, err := s.Get(ctx, "dir/k"); return err },
		"Put": func(ctx context.Context) error {
			_, err := s.Put(ctx, "other", nil, blob.Cond{IfAbsent: true})
			return err
		},
		"List":   func(ctx context.Context) error { _, err := blob.ListAll(ctx, s, ""); return err },
		"Rename": func(ctx context.Context) error { return blob.Rename(ctx, s, "dir", "moved") },
	} {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		err := op(ctx)
		took := time.Since(start)
		if !errors.Is(err, context.Canceled) || took > time.Second {
			t.Errorf("%s cancelled after 50ms on a silent server: error %v after %v; want context.Canceled at once", name, err, took)
		}
	}
}

// TestRedisVanishedObject deletes an object's hash behind the store's back,
// as a server that evicts keys would, leaving its index entry: List skips
// it, and Rename moves the rest of the tree instead of failing halfway.
func TestRedisVanishedObject(t *testing.T) {
	client := redisClient(t)
	p := uniquePrefix()
	s, err := redis.Open(t.Context(), client, &redis.Options{Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropRedisPrefix(t, client, p) })
	for _, k := range []string{"dir/a", "dir/b", "dir/c"} {
		if _, err := s.Put(t.Context(), k, []byte(k), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.Del(t.Context(), "cm:{"+p+"}:o:dir/b").Err(); err != nil {
		t.Fatal(err)
	}
	wantRedisKeys(t, s, "dir/a", "dir/c")
	if err := blob.Rename(t.Context(), s, "dir", "moved"); err != nil {
		t.Fatalf("Rename over a vanished object: %v", err)
	}
	wantRedisKeys(t, s, "moved/a", "moved/c")
	if n, err := client.ZCard(t.Context(), "cm:{"+p+"}:idx").Result(); err != nil || n != 2 {
		t.Fatalf("index holds %d entries, %v; want 2 (the vanished one dropped)", n, err)
	}
}

// wantRedisKeys checks that s lists exactly want.
func wantRedisKeys(t *testing.T, s blob.Store, want ...string) {
	t.Helper()
	infos, err := blob.ListAll(t.Context(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, info := range infos {
		got = append(got, info.Key)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
}
