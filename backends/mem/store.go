package mem

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/btree"

	"github.com/cloudmem/cloudmem/blob"
)

// Options configures a Store. The zero value is ready to use.
type Options struct {
	// Now returns the time recorded as Info.Modified. Nil means time.Now.
	Now func() time.Time
}

// Open returns an empty store, in the shape every backend's Open has: it
// opens nothing and never fails, so ctx is unused and the error always
// nil. A nil opts means the zero Options. New is the same without the
// ctx and the error, for tests and examples.
func Open(_ context.Context, opts *Options) (blob.Store, error) { return New(opts), nil }

// New returns an empty store. A nil opts means the zero Options.
// The store is safe for concurrent use.
func New(opts *Options) blob.Store {
	s := &store{objects: map[string]object{}, keys: btree.NewOrderedG[string](btreeDegree), now: time.Now}
	if opts != nil && opts.Now != nil {
		s.now = opts.Now
	}
	return s
}

type object struct {
	data []byte
	info blob.Info
}

// btreeDegree is the degree of the key index: a node holds up to 63 keys.
const btreeDegree = 32

// store keeps the objects in a map and their keys, in byte order, in a
// B-tree beside it, so that a listing, rename or tree delete finds the keys
// under a prefix in time logarithmic in the store's size (plus the keys it
// touches), not by a scan of every key.
type store struct {
	mu      sync.RWMutex
	objects map[string]object
	keys    *btree.BTreeG[string] // the keys of objects
	seq     uint64                // last version handed out; versions are never reused
	now     func() time.Time
}

var (
	_ blob.Tree = (*store)(nil)
)

func (s *store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return nil, blob.Info{}, err
	}
	if err := blob.CheckLimit(limit); err != nil {
		return nil, blob.Info{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	o, ok := s.objects[key]
	if !ok {
		return nil, blob.Info{}, notExist(key)
	}
	if err := blob.CheckSize(key, o.info.Size, limit); err != nil {
		return nil, blob.Info{}, err
	}
	return slices.Clone(o.data), o.info, nil
}

func (s *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return blob.Info{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	o, ok := s.objects[key]
	if !ok {
		return blob.Info{}, notExist(key)
	}
	return o.info, nil
}

func (s *store) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return blob.Info{}, err
	}
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(key, c); err != nil {
		return blob.Info{}, err
	}
	o := object{data: slices.Clone(data), info: s.newInfo(key, int64(len(data)))}
	s.set(key, o)
	return o.info, nil
}

func (s *store) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := blob.CheckDelete(ctx, key, c); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; !ok && c.IfVersion == "" {
		return notExist(key)
	}
	if err := s.check(key, c); err != nil {
		return err
	}
	s.remove(key)
	return nil
}

// set stores o under key; the caller holds the write lock.
func (s *store) set(key string, o object) {
	if _, ok := s.objects[key]; !ok {
		s.keys.ReplaceOrInsert(key)
	}
	s.objects[key] = o
}

// remove deletes key; the caller holds the write lock.
func (s *store) remove(key string) {
	delete(s.objects, key)
	s.keys.Delete(key)
}

// ascend calls fn with each key that starts with prefix, in byte order,
// until fn returns false; the caller holds the lock.
func (s *store) ascend(prefix string, fn func(key string) bool) {
	s.keys.AscendGreaterOrEqual(prefix, func(k string) bool {
		return strings.HasPrefix(k, prefix) && fn(k)
	})
}

// under returns the keys that start with prefix, in byte order; the caller
// holds the lock.
func (s *store) under(prefix string) []string {
	var keys []string
	s.ascend(prefix, func(k string) bool {
		keys = append(keys, k)
		return true
	})
	return keys
}

// check enforces c on key; the caller holds the write lock.
func (s *store) check(key string, c blob.Cond) error {
	o, ok := s.objects[key]
	switch {
	case c.IfAbsent && ok:
		return precondition(key)
	case c.IfVersion != "" && (!ok || o.info.Version != c.IfVersion):
		return precondition(key)
	}
	return nil
}

// newInfo hands out the next version; the caller holds the write lock.
func (s *store) newInfo(key string, size int64) blob.Info {
	s.seq++
	return blob.Info{Key: key, Size: size, Version: strconv.FormatUint(s.seq, 10), Modified: s.now()}
}

func (s *store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return blob.CheckedList(ctx, prefix, func(yield func(blob.Info, error) bool) {
		// Snapshot under the lock, yield without it, so that the consumer
		// may call back into the store.
		s.mu.RLock()
		keys := s.under(prefix)
		infos := make([]blob.Info, len(keys))
		for i, k := range keys {
			infos[i] = s.objects[k].info
		}
		s.mu.RUnlock()
		blob.YieldSorted(ctx, infos, yield)
	})
}

// Rename implements blob.Tree atomically.
func (s *store) Rename(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return fmt.Errorf("mem: cannot move %q into itself: %w", src, blob.ErrInvalidKey)
	}
	if err := blob.CheckKey(src); err != nil {
		return err
	}
	if err := blob.CheckKey(dst); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	moves := []string{src} // source keys
	if _, ok := s.objects[src]; !ok {
		moves = s.under(src + "/")
	}
	if len(moves) == 0 {
		return notExist(src)
	}
	if _, ok := s.objects[dst]; ok || s.hasUnder(dst+"/") {
		return precondition(dst)
	}
	for _, from := range moves {
		o := s.objects[from]
		to := dst + strings.TrimPrefix(from, src)
		o.info = s.newInfo(to, o.info.Size)
		s.remove(from)
		s.set(to, o)
	}
	return nil
}

// DeleteTree implements blob.Tree atomically.
func (s *store) DeleteTree(ctx context.Context, dir string) error {
	if err := blob.CheckCall(ctx, dir); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := s.under(dir + "/")
	if len(keys) == 0 {
		return notExist(dir + "/")
	}
	for _, k := range keys {
		s.remove(k)
	}
	return nil
}

// hasUnder reports whether any key starts with prefix; the caller holds
// the lock.
func (s *store) hasUnder(prefix string) bool {
	found := false
	s.ascend(prefix, func(string) bool {
		found = true
		return false
	})
	return found
}
