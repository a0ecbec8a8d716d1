package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"hash/maphash"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
)

// The lock on a key (blob.Locker) is the string cm:{PREFIX}:l:KEY, set with
// SET NX PX to a random token of its holder and deleted by a script only
// while it still holds that token. It expires after lockTTL, so a holder
// that died (or stalled past it) cannot keep others out for longer; the
// lock is advisory, and the conditional Put stays the guarantee should an
// expired holder still write.
//
// Waiters do not poll: the release pushes one entry onto the list
// cm:{PREFIX}:l:KEY\xffwake (a name no blob key's lock has, since no key
// holds the byte 0xFF) and a waiter blocks in BLPOP on it, so one waiter
// wakes and tries again the moment the lock is free. A wake-up is never
// lost (the entry waits in the list, which expires after lockTTL), and a
// waiter also tries again every second (lockWake) in case the holder died.
// Goroutines of one process queue in it first (lockStripes local locks, by
// the hash of the lock's name), so that one of them at a time waits on the
// server, keeping the client's connection pool free for the holder's own
// calls; two keys of one process share a local lock with a chance of 1 in
// 256, which makes one wait for the other, never breaks exclusion.
const (
	lockTTL     = 30 * time.Second
	lockWake    = time.Second // BLPOP's shortest timeout through go-redis
	lockStripes = 256
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

var _ blob.Locker = (*store)(nil)

// localLocks are the in-process stripes, shared by every store of the
// process and picked by the hash of the lock's name (which holds the
// store's prefix): 1-slot semaphores.
var localLocks = func() (l struct {
	seed    maphash.Seed
	stripes [lockStripes]chan struct{}
}) {
	l.seed = maphash.MakeSeed()
	for i := range l.stripes {
		l.stripes[i] = make(chan struct{}, 1)
	}
	return l
}()

func localStripe(name string) chan struct{} {
	return localLocks.stripes[maphash.String(localLocks.seed, name)%lockStripes]
}

// Lock takes the lock on key (see blob.Locker), for every client of the
// same prefix on the server, waiting (without polling, see above) until it
// holds it or ctx is done. The lock expires 30 s after it was taken if
// unlock was never called.
func (s *store) Lock(ctx context.Context, key string) (unlock func(), err error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return nil, err
	}
	name, wake, token := s.keys.lockName(key), s.keys.lockName(key)+"\xffwake", rand.Text()
	local := localStripe(name)
	select {
	case local <- struct{}{}:
	case <-ctx.Done():
		return nil, s.wrapErr(ctx, "lock", key, nil, ctx.Err())
	}
	for {
		ok, err := call(ctx, func() (bool, error) {
			return s.client.SetNX(ctx, name, token, lockTTL).Result()
		})
		if err != nil {
			<-local
			return nil, s.wrapErr(ctx, "lock", key, nil, err)
		}
		if ok {
			break
		}
		_, err = call(ctx, func() ([]string, error) {
			return s.client.BLPop(ctx, lockWake, wake).Result()
		})
		if err != nil && !errors.Is(err, goredis.Nil) {
			<-local
			return nil, s.wrapErr(ctx, "lock", key, nil, err)
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
			defer cancel()
			// A failed release only leaves the lock to expire.
			_ = unlockScript.Run(uctx, s.client, []string{name, wake}, token, lockTTL.Milliseconds()).Err()
			<-local
		})
	}, nil
}
