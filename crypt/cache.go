package crypt

import (
	"container/list"
	"crypto/sha256"
	"slices"
	"sync"
)

// fileKeyCacheSize bounds the file keys a store remembers: one per object
// version read, about 150 bytes each.
const fileKeyCacheSize = 4096

// fileKeyCache remembers the age file key of each header it saw verified,
// by the SHA-256 of the header's exact bytes (every recipient stanza and
// the header's MAC). An object read again with a byte-identical header (the
// same object version) gets its file key without a key agreement or a
// header check: both would give the same answer as the first time. An
// object with any other header (rewritten, rekeyed, or altered anywhere in
// its header) misses and is checked afresh. The payload is decrypted and
// authenticated on every read, hit or miss, so an object altered anywhere is
// refused exactly as without the cache. Failures are never remembered.
//
// A nil *fileKeyCache remembers nothing. It is safe for concurrent use and
// keeps at most max keys, dropping the least recently used.
type fileKeyCache struct {
	max int

	mu    sync.Mutex
	keys  map[[sha256.Size]byte]*list.Element // of *cachedKey
	order list.List                           // most recently used first
}

type cachedKey struct {
	header  [sha256.Size]byte
	fileKey []byte
}

// newFileKeyCache returns a cache that keeps at most max file keys.
func newFileKeyCache(max int) *fileKeyCache {
	return &fileKeyCache{max: max, keys: make(map[[sha256.Size]byte]*list.Element)}
}

// get returns the file key of the header whose hash is h, if remembered.
func (c *fileKeyCache) get(h [sha256.Size]byte) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.keys[h]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedKey).fileKey, true
}

// put remembers the file key of a verified header whose hash is h.
func (c *fileKeyCache) put(h [sha256.Size]byte, fileKey []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.keys[h]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.keys[h] = c.order.PushFront(&cachedKey{header: h, fileKey: slices.Clone(fileKey)})
	if c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.keys, last.Value.(*cachedKey).header)
	}
}

// len reports how many file keys are remembered.
func (c *fileKeyCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
