package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
)

// lockServer returns the address of the Redis server the lock tests use,
// from CLOUDMEM_TEST_REDIS_ADDR (integration/emulators.sh env sets it). It
// fails when CI or CLOUDMEM_INTEGRATION is set and there is none, and
// otherwise skips, saying why.
func lockServer(t *testing.T) string {
	t.Helper()
	addr := os.Getenv("CLOUDMEM_TEST_REDIS_ADDR")
	if addr == "" {
		if os.Getenv("CI") != "" || os.Getenv("CLOUDMEM_INTEGRATION") != "" {
			t.Fatal("CLOUDMEM_TEST_REDIS_ADDR is not set: the lock tests need a Redis server")
		}
		t.Skip("needs a Redis server: set CLOUDMEM_TEST_REDIS_ADDR (eval \"$(bash integration/emulators.sh env)\")")
	}
	return addr
}

// lockStore opens a store with a client of its own (as another process
// would have) under prefix, closed at the end of the test.
func lockStore(t *testing.T, addr, prefix string) blob.Store {
	t.Helper()
	client := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	s, err := Open(t.Context(), client, &Options{Prefix: prefix})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// TestLockExcludes: a held lock keeps another client out until released;
// the process keeps no in-process lock (package keylock) once nobody holds
// or waits for one, the wait that timed out included.
func TestLockExcludes(t *testing.T) {
	addr := lockServer(t)
	prefix := "locktest-" + rand.Text()
	a, b := lockStore(t, addr, prefix), lockStore(t, addr, prefix)
	unlock, err := blob.Lock(t.Context(), a, "notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := blob.Lock(ctx, b, "notes/a.md"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held key: %v, want DeadlineExceeded", err)
	}
	other, err := blob.Lock(t.Context(), b, "notes/b.md")
	if err != nil {
		t.Fatalf("Lock of another key: %v", err)
	}
	other()
	unlock()
	unlock() // harmless
	again, err := blob.Lock(t.Context(), b, "notes/a.md")
	if err != nil {
		t.Fatalf("Lock after the release: %v", err)
	}
	again()
	if infos, err := blob.ListAll(t.Context(), a, ""); err != nil || len(infos) != 0 {
		t.Fatalf("the locks are listed: %v, %v", infos, err)
	}
	if n := localLocks.Len(); n != 0 {
		t.Errorf("%d in-process locks kept after every unlock and the wait that timed out, want none", n)
	}
}

// TestLockedWritersNeverConflict starts writers, each with a client of its
// own, all at once (a barrier), each appending lines to one object under
// its lock: every append lands, none meets a conflict.
func TestLockedWritersNeverConflict(t *testing.T) {
	addr := lockServer(t)
	prefix := "locktest-" + rand.Text()
	const writers, appends = 16, 8
	first := lockStore(t, addr, prefix)
	if _, err := first.Put(t.Context(), "log.md", nil, blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Delete(context.Background(), "log.md", blob.Cond{}) })
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	var acknowledged, refused, conflicts atomic.Int64
	for w := range writers {
		s := lockStore(t, addr, prefix)
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			for i := range appends {
				n, err := appendLocked(t.Context(), s, "log.md", fmt.Sprintf("w%d-%d", w, i))
				conflicts.Add(int64(n))
				if err != nil {
					refused.Add(1)
					t.Errorf("writer %d: %v", w, err)
					continue
				}
				acknowledged.Add(1)
			}
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	data, _, err := lockStore(t, addr, prefix).Get(t.Context(), "log.md", blob.MaxObjectBytes)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var want []string
	for w := range writers {
		for i := range appends {
			want = append(want, fmt.Sprintf("w%d-%d", w, i))
		}
	}
	slices.Sort(lines)
	slices.Sort(want)
	if acknowledged.Load() != writers*appends || refused.Load() != 0 || conflicts.Load() != 0 || !slices.Equal(lines, want) {
		t.Fatalf("%d appends acknowledged, %d refused, %d conflicts; %d lines present (want %d, each once, and 0 conflicts)",
			acknowledged.Load(), refused.Load(), conflicts.Load(), len(lines), len(want))
	}
}

// appendLocked appends line to key's content under key's lock, as the
// memory handler edits: Get, edit, Put(IfVersion), again on a conflict. It
// returns the conflicts it met.
func appendLocked(ctx context.Context, s blob.Store, key, line string) (conflicts int, err error) {
	unlock, err := blob.Lock(ctx, s, key)
	if err != nil {
		return 0, err
	}
	defer unlock()
	for {
		data, info, err := s.Get(ctx, key, blob.MaxObjectBytes)
		if err != nil {
			return conflicts, err
		}
		_, err = s.Put(ctx, key, append(data, line+"\n"...), blob.Cond{IfVersion: info.Version})
		if !errors.Is(err, blob.ErrPrecondition) {
			return conflicts, err
		}
		conflicts++
	}
}

// hideLocker hides the store's Locker, so that blob.Lock holds nothing.
type hideLocker struct{ blob.Store }

// BenchmarkContendedEdits measures read-modify-writes under the key lock
// (appendLocked) by 1 writer and by 64 writers on one object, each with a
// client of its own, and 64 writers without the lock for comparison. It
// reports edits per second and conflicts, and fails on a lost edit.
//
//	go test ./backends/redis -run '^$' -bench ContendedEdits -benchtime 2000x
func BenchmarkContendedEdits(b *testing.B) {
	addr := os.Getenv("CLOUDMEM_TEST_REDIS_ADDR")
	if addr == "" {
		b.Skip("needs a Redis server: set CLOUDMEM_TEST_REDIS_ADDR")
	}
	for _, tc := range []struct {
		name     string
		writers  int
		unlocked bool
	}{
		{"1-writer", 1, false},
		{"64-writers", 64, false},
		{"64-writers-unlocked", 64, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := b.Context()
			prefix := "lockbench-" + rand.Text()
			stores := make([]blob.Store, tc.writers)
			for i := range stores {
				client := goredis.NewClient(&goredis.Options{Addr: addr})
				b.Cleanup(func() { client.Close() })
				s, err := Open(ctx, client, &Options{Prefix: prefix})
				if err != nil {
					b.Fatal(err)
				}
				if tc.unlocked {
					s = hideLocker{s}
				}
				stores[i] = s
			}
			if _, err := stores[0].Put(ctx, "log.md", nil, blob.Cond{}); err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { stores[0].Delete(context.Background(), "log.md", blob.Cond{}) })
			var next, conflicts atomic.Int64
			start := make(chan struct{})
			var done sync.WaitGroup
			for _, s := range stores {
				done.Add(1)
				go func() {
					defer done.Done()
					<-start
					for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
						c, err := appendLocked(ctx, s, "log.md", fmt.Sprintf("e%d", n))
						conflicts.Add(int64(c))
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			b.ResetTimer()
			close(start)
			done.Wait()
			b.StopTimer()
			data, _, err := stores[0].Get(ctx, "log.md", blob.MaxObjectBytes)
			if err != nil {
				b.Fatal(err)
			}
			if lines := strings.Count(string(data), "\n"); lines != b.N {
				b.Fatalf("%d edits made, %d lines present", b.N, lines)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "edits/s")
			b.ReportMetric(float64(conflicts.Load()), "conflicts")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// leaseStore is lockStore with a lease of its own length; it returns the
// store's client too. A second store in the same process would queue on
// the process's local lock first, so the tests play the other processes
// with that client's own commands on the lock's name.
func leaseStore(t *testing.T, addr, prefix string, lease time.Duration) (blob.Store, *goredis.Client) {
	t.Helper()
	client := goredis.NewClient(&goredis.Options{Addr: addr})
	t.Cleanup(func() { client.Close() })
	s, err := Open(t.Context(), client, &Options{Prefix: prefix, lockLease: lease})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, client
}

// TestLockLeaseRenewed: a holder keeps its lock for several leases while it
// lives (the heartbeat renews it), so another process's SET NX fails, and
// it writes under it; the release deletes it.
func TestLockLeaseRenewed(t *testing.T) {
	addr := lockServer(t)
	prefix := "locktest-" + rand.Text()
	const lease = 200 * time.Millisecond
	a, client := leaseStore(t, addr, prefix, lease)
	name := newKeys(prefix).lockName("notes/a.md")
	info, err := a.Put(t.Context(), "notes/a.md", []byte("one\n"), blob.Cond{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Delete(context.Background(), "notes/a.md", blob.Cond{}) })
	unlock, err := blob.Lock(t.Context(), a, "notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		time.Sleep(lease / 2)
		if taken, err := client.SetNX(t.Context(), name, "other", time.Minute).Result(); err != nil || taken {
			t.Fatalf("another process took a held lock after renewals: %v, %v", taken, err)
		}
	}
	if _, err := a.Put(t.Context(), "notes/a.md", []byte("one\ntwo\n"), blob.Cond{IfVersion: info.Version}); err != nil {
		t.Fatalf("Put under a renewed lease: %v", err)
	}
	unlock()
	if n, err := client.Exists(t.Context(), name).Result(); err != nil || n != 0 {
		t.Fatalf("the lock after its release: %d, %v; want it gone", n, err)
	}
	if data, _, err := a.Get(t.Context(), "notes/a.md", blob.MaxObjectBytes); err != nil || string(data) != "one\ntwo\n" {
		t.Fatalf("content %q, %v; want %q", data, err, "one\ntwo\n")
	}
}

// TestLockOfDeadHolderFreed: a holder that dies holding a lock (its client
// closed, so neither heartbeat nor release reaches the server, as after
// kill -9) keeps the next writer out for one lease, not for a call timeout.
func TestLockOfDeadHolderFreed(t *testing.T) {
	addr := lockServer(t)
	prefix := "locktest-" + rand.Text()
	const lease = 300 * time.Millisecond
	dead, deadClient := leaseStore(t, addr, prefix, lease)
	live, _ := leaseStore(t, addr, prefix, lease)
	unlock, err := blob.Lock(t.Context(), dead, "notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	deadClient.Close()
	unlock() // frees this process's local lock; the release cannot reach the server
	// The lease, then at most one wake period (lockWake), with room.
	ctx, cancel := context.WithTimeout(t.Context(), lease+lockWake+time.Second)
	defer cancel()
	next, err := blob.Lock(ctx, live, "notes/a.md")
	if err != nil {
		t.Fatalf("Lock of a dead holder's key: %v, want it within a lease and a wake period", err)
	}
	next()
}

// TestLostLeaseFencesPut: a holder whose lease was lost (here deleted on the
// server, as its expiry during a stall would) and taken by another process
// cannot write: its Put changes nothing and fails with ErrPrecondition,
// and its release leaves the new holder's lock alone.
func TestLostLeaseFencesPut(t *testing.T) {
	addr := lockServer(t)
	prefix := "locktest-" + rand.Text()
	a, client := leaseStore(t, addr, prefix, time.Minute)
	name := newKeys(prefix).lockName("notes/a.md")
	info, err := a.Put(t.Context(), "notes/a.md", []byte("one\n"), blob.Cond{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Delete(context.Background(), "notes/a.md", blob.Cond{})
		a.Delete(context.Background(), "notes/b.md", blob.Cond{})
		client.Del(context.Background(), name)
	})
	unlock, err := blob.Lock(t.Context(), a, "notes/a.md")
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Del(t.Context(), name).Err(); err != nil {
		t.Fatal(err)
	}
	if taken, err := client.SetNX(t.Context(), name, "other", time.Minute).Result(); err != nil || !taken {
		t.Fatalf("another process's SET NX of a lost lease: %v, %v", taken, err)
	}
	if _, err := a.Put(t.Context(), "notes/a.md", []byte("one\nlost\n"), blob.Cond{IfVersion: info.Version}); !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("Put after the lease was lost: %v, want ErrPrecondition", err)
	}
	if data, _, err := a.Get(t.Context(), "notes/a.md", blob.MaxObjectBytes); err != nil || string(data) != "one\n" {
		t.Fatalf("content %q, %v; want %q", data, err, "one\n")
	}
	// The refusal dropped the fence: the caller's next attempt, a write
	// at the version it read again, is judged by its condition alone
	// (not refused for the lost lease over and over, which a handler's
	// retries would report as a conflict).
	if _, err := a.Put(t.Context(), "notes/a.md", []byte("one\nretry\n"), blob.Cond{IfVersion: "stale"}); !errors.Is(err, blob.ErrPrecondition) {
		t.Fatalf("a stale Put after the fence dropped: %v, want ErrPrecondition", err)
	}
	again, err := a.Put(t.Context(), "notes/a.md", []byte("one\nretry\n"), blob.Cond{IfVersion: info.Version})
	if err != nil {
		t.Fatalf("the next attempt at the version read: %v", err)
	}
	unlock()
	if holder, err := client.Get(t.Context(), name).Result(); err != nil || holder != "other" {
		t.Fatalf("the new holder's lock after the old one's release: %q, %v", holder, err)
	}
	// Once released, a's Puts are not fenced, and neither are other keys'.
	if _, err := a.Put(t.Context(), "notes/a.md", []byte("one\ntwo\n"), blob.Cond{IfVersion: again.Version}); err != nil {
		t.Fatalf("Put after the release: %v", err)
	}
	if _, err := a.Put(t.Context(), "notes/b.md", []byte("free\n"), blob.Cond{}); err != nil {
		t.Fatalf("Put of an unlocked key: %v", err)
	}
}

// TestLockWaitOnServerEnds: a Lock that waits on the server (the lock is
// another process's, here set on the server directly) ends with its
// context, holding nothing here or there: the process keeps no in-process
// lock, the other holder's lock stays, and once it is gone the key can be
// locked.
func TestLockWaitOnServerEnds(t *testing.T) {
	addr := lockServer(t)
	prefix := "locktest-" + rand.Text()
	s, client := leaseStore(t, addr, prefix, time.Minute)
	name := newKeys(prefix).lockName("notes/a.md")
	if err := client.Set(t.Context(), name, "another process", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Del(context.Background(), name) })
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := blob.Lock(ctx, s, "notes/a.md"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a key another process holds: %v, want DeadlineExceeded", err)
	}
	if n := localLocks.Len(); n != 0 {
		t.Errorf("%d in-process locks kept after the wait ended, want none", n)
	}
	if v, err := client.Get(t.Context(), name).Result(); err != nil || v != "another process" {
		t.Errorf("the other process's lock after the wait: %q, %v", v, err)
	}
	if err := client.Del(t.Context(), name).Err(); err != nil {
		t.Fatal(err)
	}
	unlock, err := blob.Lock(t.Context(), s, "notes/a.md")
	if err != nil {
		t.Fatalf("Lock once the other process's lock is gone: %v", err)
	}
	unlock()
}
