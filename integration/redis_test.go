package integration

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
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
	t.Run("spec", func(t *testing.T) { memorytest.RunWith(t, newStore, parallelCases) })
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
				if err := writer.(blob.Tree).Rename(t.Context(), "old", "new"); err != nil {
					return err
				}
				if err := writer.(blob.Tree).Rename(t.Context(), "new", "old"); err != nil {
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
				return writer.(blob.Tree).DeleteTree(t.Context(), "doomed")
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

// TestRedisSameOutputAsFile runs the session of session_test.go through
// memory.Handler over the local-directory store and over Redis, and
// requires byte-identical results and final contents.
func TestRedisSameOutputAsFile(t *testing.T) {
	sameOutputAsFile(t, "Redis", newRedisStore(t, redisClient(t)))
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
	stores := map[string]blob.Store{ // by the content each will hold
		"a":        openURL(t, "redis://"+addr+"/0?prefix="+p),
		"a:b":      openURL(t, "redis://"+addr+"?prefix="+p+":b"),
		"a/sub":    openURL(t, "redis://"+addr+"/0?prefix="+p+"/sub"),
		"a in db1": openURL(t, "redis://"+addr+"/1?prefix="+p),
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
		got, _, err := s.Get(t.Context(), "k", blob.MaxObjectBytes)
		if err != nil || string(got) != data || len(infos) != 1 {
			t.Errorf("store %q: Get(k) = %q, %v; %d keys listed; want only its own k", data, got, err, len(infos))
		}
	}

	ro := openURL(t, "redis://"+addr+"/0?readonly=true&prefix="+p)
	if got, _, err := ro.Get(t.Context(), "k", blob.MaxObjectBytes); err != nil || string(got) != "a" {
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

	closing := openURL(t, "redis://"+addr+"/0?prefix="+p)
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
		// Opening makes no call (a server down at start serves once it is
		// back); the first call reports the password.
		ws, err := storeurl.Open(t.Context(), u)
		if err != nil {
			t.Fatalf("Open with a wrong password: %v; want the error at the first call", err)
		}
		_, err = ws.Stat(t.Context(), "k")
		ws.(io.Closer).Close()
		var redisErr goredis.Error
		if !errors.As(err, &redisErr) || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Errorf("wrong password: error = %v, want go-redis' WRONGPASS error", err)
		}
		if err != nil && strings.Contains(err.Error(), wrong) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}
