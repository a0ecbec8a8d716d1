package blob

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync/atomic"
)

// Counts is a snapshot of the calls a Counter has seen.
type Counts struct {
	Get, Stat, Put, Delete, List int64
	Rename, DeleteTree           int64 // capability calls served by the inner store
	Copy, DeleteBatch            int64 // likewise (see Copier and BatchDeleter): one per call
}

// Total is the number of storage calls, capability calls included.
func (c Counts) Total() int64 {
	return c.Get + c.Stat + c.Put + c.Delete + c.List + c.Rename + c.DeleteTree + c.Copy + c.DeleteBatch
}

// Counter is a Store that counts the calls made through it and forwards them
// to an inner store. A List counts once however many objects it yields. A
// Rename or DeleteTree the inner store refuses with errors.ErrUnsupported
// (as the encrypting store does for Rename) is not counted: it reached no
// storage.
// When the inner store lacks Tree, Copier or BatchDeleter,
// the package functions Rename, DeleteTree, Copy and DeleteBatch fall back
// through the Counter, so the core calls the fallback makes are counted
// too. Counter is safe for concurrent use when the inner store is.
type Counter struct {
	inner                                         Store
	get, stat, put, del, list, rename, deleteTree atomic.Int64
	copy, deleteBatch                             atomic.Int64
}

var (
	_ Tree      = (*Counter)(nil)
	_ io.Closer = (*Counter)(nil)
)

// NewCounter returns a Counter over s with every count at zero.
func NewCounter(s Store) *Counter { return &Counter{inner: s} }

// Counts returns the counts so far.
func (c *Counter) Counts() Counts {
	return Counts{
		Get: c.get.Load(), Stat: c.stat.Load(), Put: c.put.Load(), Delete: c.del.Load(),
		List: c.list.Load(), Rename: c.rename.Load(), DeleteTree: c.deleteTree.Load(),
		Copy: c.copy.Load(), DeleteBatch: c.deleteBatch.Load(),
	}
}

// Reset sets every count to zero.
func (c *Counter) Reset() {
	for _, n := range []*atomic.Int64{&c.get, &c.stat, &c.put, &c.del, &c.list, &c.rename, &c.deleteTree, &c.copy, &c.deleteBatch} {
		n.Store(0)
	}
}

func (c *Counter) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	c.get.Add(1)
	return c.inner.Get(ctx, key, limit)
}

func (c *Counter) Stat(ctx context.Context, key string) (Info, error) {
	c.stat.Add(1)
	return c.inner.Stat(ctx, key)
}

func (c *Counter) Put(ctx context.Context, key string, data []byte, cond Cond) (Info, error) {
	c.put.Add(1)
	return c.inner.Put(ctx, key, data, cond)
}

func (c *Counter) Delete(ctx context.Context, key string, cond Cond) error {
	c.del.Add(1)
	return c.inner.Delete(ctx, key, cond)
}

func (c *Counter) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	c.list.Add(1)
	return c.inner.List(ctx, prefix)
}

func (c *Counter) Rename(ctx context.Context, src, dst string) error {
	r, ok := c.inner.(Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	err := r.Rename(ctx, src, dst)
	if !errors.Is(err, errors.ErrUnsupported) { // a refusal is not a storage call
		c.rename.Add(1)
	}
	return err
}

func (c *Counter) DeleteTree(ctx context.Context, dir string) error {
	d, ok := c.inner.(Tree)
	if !ok {
		return errors.ErrUnsupported
	}
	err := d.DeleteTree(ctx, dir)
	if !errors.Is(err, errors.ErrUnsupported) {
		c.deleteTree.Add(1)
	}
	return err
}

// Close closes the inner store.
func (c *Counter) Close() error { return Close(c.inner) }
