package memorytest

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/cloudmem/cloudmem/blob"
)

// secretCause is the error a failing store returns. It is full of what a
// careless handler would leak to the model: a credential, a host path, an
// internal key. The contract allows none of it in the result text.
var secretCause = errors.New("PUT tenant/a/notes.md: AccessDenied for key AKIAEXAMPLESECRET9 " +
	"(token=hunter2-s3cr3t) reading /home/deploy/.config/cloudmem/credentials")

// op names a Store method, for failStore.
type op int

const (
	opGet op = 1 << iota
	opStat
	opPut
	opDelete
	opList
	opAll = opGet | opStat | opPut | opDelete | opList
)

// failing returns a Wrap that makes the store fail the given methods with
// secretCause and serve the others. The store it returns has neither
// blob.Tree, so moves and tree deletes go through the core
// methods and meet the failures too.
func failing(ops op) func(blob.Store) blob.Store {
	return func(s blob.Store) blob.Store { return failStore{inner: s, fail: ops} }
}

type failStore struct {
	inner blob.Store
	fail  op
}

func (f failStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if f.fail&opGet != 0 {
		return nil, blob.Info{}, secretCause
	}
	return f.inner.Get(ctx, key, limit)
}

func (f failStore) Stat(ctx context.Context, key string) (blob.Info, error) {
	if f.fail&opStat != 0 {
		return blob.Info{}, secretCause
	}
	return f.inner.Stat(ctx, key)
}

func (f failStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if f.fail&opPut != 0 {
		return blob.Info{}, secretCause
	}
	return f.inner.Put(ctx, key, data, c)
}

func (f failStore) Delete(ctx context.Context, key string, c blob.Cond) error {
	if f.fail&opDelete != 0 {
		return secretCause
	}
	return f.inner.Delete(ctx, key, c)
}

func (f failStore) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	if f.fail&opList != 0 {
		return func(yield func(blob.Info, error) bool) { yield(blob.Info{}, secretCause) }
	}
	return f.inner.List(ctx, prefix)
}

// rival returns a Wrap whose store behaves as if another writer changed
// every object a moment before each compare-and-swap: every Put with
// IfVersion fails with blob.ErrPrecondition and writes nothing.
func rival(s blob.Store) blob.Store { return rivalStore{s} }

type rivalStore struct{ blob.Store }

func (r rivalStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if c.IfVersion != "" {
		return blob.Info{}, fmt.Errorf("%q changed meanwhile: %w", key, blob.ErrPrecondition)
	}
	return r.Store.Put(ctx, key, data, c)
}

// budgeted returns a Wrap that makes the store say it holds keys of at most
// n bytes (blob.Traits.KeyBudget), as a prefixed store does. It does not refuse
// longer keys itself: the handler must, before any storage call.
func budgeted(n int) func(blob.Store) blob.Store {
	return func(s blob.Store) blob.Store { return budgetStore{Store: s, n: n} }
}

type budgetStore struct {
	blob.Store
	n int
}

func (b budgetStore) Traits() blob.Traits {
	t := blob.TraitsOf(b.Store)
	t.KeyBudget = min(b.n, t.KeyBudget)
	return t
}
