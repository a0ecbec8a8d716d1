package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/blob"
)

// Redis tests that inject faults: a connection that breaks after a write
// was sent, a server that stops answering, a key that vanishes.

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
	s := newRedisStore(t, client)
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
	resent("Rename", func() error { return s.(blob.Tree).Rename(ctx, "k", "moved") })
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
	resent("DeleteTree", func() error { return s.(blob.Tree).DeleteTree(ctx, "dir") })
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
	s := newRedisStore(t, client)
	if _, err := s.Put(t.Context(), "dir/k", []byte("v"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}

	stall.Store(true)
	defer stall.Store(false)
	for name, op := range map[string]func(context.Context) error{
		"Get": func(ctx context.Context) error { _, _, err := s.Get(ctx, "dir/k", blob.MaxObjectBytes); return err },
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

// TestRedisVanishedObjectFreesItsName: an object whose hash vanished (a
// server that evicts keys), leaving its index entry, is absent to Stat and
// List, and does not keep its name from becoming a directory, nor the keys
// that were under it their parent from becoming an object.
func TestRedisVanishedObjectFreesItsName(t *testing.T) {
	client := redisClient(t)
	p := uniquePrefix()
	s, err := redis.Open(t.Context(), client, &redis.Options{Prefix: p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropRedisPrefix(t, client, p) })
	for _, k := range []string{"file", "dir/a"} {
		if _, err := s.Put(t.Context(), k, []byte(k), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
		if err := client.Del(t.Context(), "cm:{"+p+"}:o:"+k).Err(); err != nil {
			t.Fatal(err)
		}
	}
	wantRedisKeys(t, s)
	for _, k := range []string{"file/x", "dir"} {
		if _, err := s.Put(t.Context(), k, []byte(k), blob.Cond{IfAbsent: true}); err != nil {
			t.Errorf("Put(%q) beside a vanished object: %v", k, err)
		}
	}
	if err := blob.Rename(t.Context(), s, "dir", "file/y"); err != nil {
		t.Errorf("Rename(%q, %q) beside a vanished object: %v", "dir", "file/y", err)
	}
	wantRedisKeys(t, s, "file/x", "file/y")
	if _, err := s.Put(t.Context(), "gone", []byte("gone"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if err := client.Del(t.Context(), "cm:{"+p+"}:o:gone").Err(); err != nil {
		t.Fatal(err)
	}
	if err := blob.Rename(t.Context(), s, "file/x", "gone"); err != nil {
		t.Errorf("Rename(%q, %q) onto a vanished object: %v", "file/x", "gone", err)
	}
	wantRedisKeys(t, s, "file/y", "gone")
}
