package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/keylock"
)

// The lock on a key (blob.Locker) is the string cm:{PREFIX}:l:KEY, set with
// SET NX PX to a random token of its holder and deleted by a script only
// while it still holds that token. It is a lease: it expires lockLease after
// it was last renewed, and while it is held a heartbeat renews it five
// times a lease (a script that extends it only while it still holds the
// token), stopped by unlock. So a holder that died (a replica killed with kill -9)
// keeps the other writers of its file out for at most lockLease, not for a
// call timeout, while a live holder keeps its lock for as long as its
// read-modify-write takes.
//
// A holder that lost its lease anyway (the heartbeat did not reach the
// server for lockLease, or a process stalled past it) must not write over
// the next holder's turn, so the lease fences the writes: while a Lock on a
// key is held through a store, that store's Put of the key runs only if the
// server still holds the holder's token, in the same script as the write.
// Otherwise the Put changes nothing and fails with blob.ErrPrecondition, as
// a lost race does, and the caller re-reads or gives up as it would then;
// the fence is then dropped, so the caller's next attempt (a conditional
// write after a fresh read) is judged by its condition alone.
//
// Waiters do not poll: the release pushes one entry onto the list
// cm:{PREFIX}:l:KEY\xffwake (a name no blob key's lock has, since no key
// holds the byte 0xFF) and a waiter blocks in BLPOP on it, so one waiter
// wakes and tries again the moment the lock is free. A wake-up is never
// lost (the entry waits in the list, which expires after lockLease), and a
// waiter also tries again every second (lockWake) in case the holder died.
// Goroutines of one process queue in it first (a lock in the process per
// lock name, package keylock), so that one of them at a time waits on the
// server, keeping the client's connection pool free for the holder's own
// calls.
const (
	// lockLease is how long a lock outlives its holder's last renewal.
	// Five renewals fit in one lease, so a few slow round trips (a busy
	// connection pool, a loaded machine) do not lose it.
	lockLease = 5 * time.Second
	lockWake  = time.Second // BLPOP's shortest timeout through go-redis
	// unlockTimeout bounds the release, which runs even when the caller's
	// context has ended.
	unlockTimeout = 5 * time.Second
)

var unlockScript = goredis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	redis.call("DEL", KEYS[1])
	redis.call("RPUSH", KEYS[2], "1")
	redis.call("PEXPIRE", KEYS[2], ARGV[2])
	return 1
end
return 0`)

// renewScript extends the lease KEYS[1] to ARGV[2] ms if it still holds
// the token ARGV[1]; it returns 0 when the lease was lost.
var renewScript = goredis.NewScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("PEXPIRE", KEYS[1], ARGV[2])
end
return 0`)

var _ blob.Locker = (*store)(nil)

// localLocks are the locks of the process, shared by every store of it and
// taken by the lock's name (which holds the store's prefix).
var localLocks keylock.Locks

// Lock takes the lock on key (see blob.Locker), for every client of the
// same prefix on the server, waiting (without polling, see above) until it
// holds it or ctx is done. The lock is a lease of lockLease, renewed until
// unlock is called; while it is held, this store's Put of key succeeds only
// if the lease still is (see above).
func (s *store) Lock(ctx context.Context, key string) (unlock func(), err error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return nil, err
	}
	name, wake, token := s.keys.lockName(key), s.keys.lockName(key)+"\xffwake", rand.Text()
	unlockLocal, err := localLocks.Lock(ctx, name)
	if err != nil {
		return nil, s.wrapErr(ctx, "lock", key, nil, err)
	}
	for {
		ok, err := call(ctx, func() (bool, error) {
			return s.client.SetNX(ctx, name, token, s.lease).Result()
		})
		if err != nil {
			unlockLocal()
			return nil, s.wrapErr(ctx, "lock", key, nil, err)
		}
		if ok {
			break
		}
		_, err = call(ctx, func() ([]string, error) {
			return s.client.BLPop(ctx, lockWake, wake).Result()
		})
		if err != nil && !errors.Is(err, goredis.Nil) {
			unlockLocal()
			return nil, s.wrapErr(ctx, "lock", key, nil, err)
		}
	}
	// The local lock makes this store's goroutines take turns on name, so
	// no other lease of key is in s.leases meanwhile.
	s.leases.Store(key, token)
	stop, stopped := make(chan struct{}), make(chan struct{})
	go s.renew(context.WithoutCancel(ctx), name, token, stop, stopped)
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-stopped
			s.leases.Delete(key)
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
			defer cancel()
			// A failed release only leaves the lock to expire.
			_ = unlockScript.Run(uctx, s.client, []string{name, wake}, token, s.lease.Milliseconds()).Err()
			unlockLocal()
		})
	}, nil
}

// renew is the heartbeat of the lease name held with token: every
// s.lease/5 it extends the lease to s.lease, until stop is closed or the
// server says the lease was lost (then nothing can renew it, and the
// fenced Put refuses the holder's write). A renewal that fails (the server
// unreachable, each try bounded by the interval) is tried again at the
// next tick. It closes stopped when it returns.
func (s *store) renew(ctx context.Context, name, token string, stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	every := s.lease / 5
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		held, err := renewScript.Run(rctx, s.client, []string{name}, token, s.lease.Milliseconds()).Int()
		cancel()
		if err == nil && held == 0 {
			return
		}
	}
}
