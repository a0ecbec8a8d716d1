package integration

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
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
