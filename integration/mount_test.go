package integration

import (
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/mount/mounttest"
)

// Mount tables over every server: a read-only mount refuses every write
// while the mount beside it stays writable, and writers in two mounts, with
// renames across them, lose nothing. "Mixed" mounts a store of one server
// beside a store of another (S3 and Redis, alternately), so that a rename
// across mounts also crosses servers.
func TestMounts(t *testing.T) {
	for _, cs := range cloudStores {
		t.Run(cs.name, func(t *testing.T) { mounttest.Run(t, cs.prefixed) })
	}
	t.Run("Mixed", func(t *testing.T) {
		var n atomic.Int64
		mounttest.Run(t, func(t *testing.T) blob.Store {
			if n.Add(1)%2 == 1 {
				return newS3Store(t)
			}
			return newRedisStore(t, redisClient(t))
		})
	})
}
