package integration

// Two folders ("two machines") synced through each server's store: the dirsync scenario suite, which compares
// both folders and the store file by file, including a pass interrupted at every storage call in turn.

import (
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/dirsync/dirsynctest"
)

func TestSyncS3(t *testing.T)    { dirsynctest.Run(t, newS3Store) }
func TestSyncGCS(t *testing.T)   { dirsynctest.Run(t, newGCSStore) }
func TestSyncAzure(t *testing.T) { dirsynctest.Run(t, newAzureStore) }
func TestSyncRedis(t *testing.T) {
	client := redisClient(t)
	dirsynctest.Run(t, func(t *testing.T) blob.Store { return newRedisStore(t, client) })
}
