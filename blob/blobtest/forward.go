package blobtest

import (
	"context"
	"iter"
	"maps"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// The capabilities Forwarding checks, by the name it reports them under.
const (
	CapRename      = "Rename"
	CapDeleteTree  = "DeleteTree"
	CapLock        = "Lock"
	CapCopy        = "Copy"
	CapDeleteBatch = "DeleteBatch"
	CapClose       = "Close"
)

// ForwardingOptions adjusts Forwarding. The zero value expects a wrapper
// that forwards everything and reports its inner store's Traits unchanged.
type ForwardingOptions struct {
	// Traits gives the Traits the wrapper reports over a store that
	// reports in (a prefix shortens KeyBudget, a read-only wrapper sets
	// ReadOnly); nil means in itself.
	Traits func(in blob.Traits) blob.Traits
	// Unforwarded maps a capability (CapRename, ...) to the reason the
	// wrapper does not hand it to its inner store (a read-only wrapper
	// refuses writes; history makes moves key by key to record them). The
	// check then expects the inner capability not to be called; a
	// reason-less entry is an error.
	Unforwarded map[string]string
	// Key is the key the check works under (default "k"); a wrapper that
	// maps keys (a prefix) passes keys through as it does any others.
	Key string
}

// Forwarding checks that the store wrap returns over an inner store hands
// every optional capability to it: it wraps a store (over base, a new empty
// store) that has every capability of package blob and counts their calls,
// calls each package function (blob.Rename, DeleteTree, Lock, Copy,
// DeleteBatch, Close) through the wrapper and checks that the inner
// capability ran, except those in opts.Unforwarded, and that
// blob.TraitsOf the wrapper is what opts.Traits says. It is the one check
// that a wrapper loses no capability: run it for every wrapper.
func Forwarding(t *testing.T, base func(t *testing.T) blob.Store, wrap func(t *testing.T, inner blob.Store) blob.Store, opts ForwardingOptions) {
	t.Helper()
	for name, why := range opts.Unforwarded {
		if why == "" {
			t.Errorf("Unforwarded[%q] gives no reason", name)
		}
	}
	key := opts.Key
	if key == "" {
		key = "k"
	}
	in := blob.Traits{KeyBudget: 900, HidesUnderObjects: true, ExclusiveNames: true, DeletesMayRepeat: true,
		Limits: blob.Limits{MaxFiles: 7, MaxFileBytes: 99, ViewLimit: 5}, Policy: "the inner store's policy"}
	want := in
	if opts.Traits != nil {
		want = opts.Traits(in)
	}
	inner := &capStore{Store: base(t), traits: in, calls: map[string]int{}}
	s := wrap(t, inner)
	if got := blob.TraitsOf(s); !reflect.DeepEqual(got, want) {
		t.Errorf("TraitsOf the wrapper = %+v, want %+v", got, want)
	}
	ctx := t.Context()
	put := func(k string) blob.Info {
		info, err := s.Put(ctx, k, []byte("x"), blob.Cond{})
		if err != nil {
			t.Fatalf("Put %q through the wrapper: %v", k, err)
		}
		return info
	}
	readOnly := blob.IsReadOnly(s)
	calls := []struct {
		name string
		run  func()
	}{
		{CapRename, func() {
			if !readOnly {
				put(key + "-from")
			}
			_ = blob.Rename(ctx, s, key+"-from", key+"-to")
		}},
		{CapDeleteTree, func() {
			if !readOnly {
				put(key + "-dir/a")
			}
			_ = blob.DeleteTree(ctx, s, key+"-dir")
		}},
		{CapLock, func() {
			if unlock, err := blob.Lock(ctx, s, key+"-lock"); err == nil {
				unlock()
			}
		}},
		{CapCopy, func() {
			var v string
			if !readOnly {
				v = put(key + "-src").Version
			}
			_, _, _ = blob.Copy(ctx, s, key+"-src", key+"-dst", v)
		}},
		{CapDeleteBatch, func() {
			info := blob.Info{Key: key + "-v", Version: "1"}
			if !readOnly {
				info = put(key + "-v")
			}
			_, _ = blob.DeleteBatch(ctx, s, []blob.Info{{Key: key + "-a"}, info})
		}},
		{CapClose, func() { _ = blob.Close(s) }},
	}
	for _, c := range calls {
		before := inner.count(c.name)
		c.run()
		called := inner.count(c.name) > before
		why, unforwarded := opts.Unforwarded[c.name]
		switch {
		case !called && !unforwarded:
			t.Errorf("%s through the wrapper never reached the inner store's %s", c.name, c.name)
		case called && unforwarded:
			t.Errorf("%s reached the inner store, though Unforwarded says %q", c.name, why)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(opts.Unforwarded)) {
		if !slices.Contains(capabilities, name) {
			t.Errorf("Unforwarded names %q, which is no capability", name)
		}
	}
}

// capabilities are the names Forwarding checks.
var capabilities = []string{CapRename, CapDeleteTree, CapLock, CapCopy, CapDeleteBatch, CapClose}

// capStore is a Store with every capability of package blob, each counted
// and served by the package function's fallback over the inner store.
type capStore struct {
	blob.Store
	traits blob.Traits
	mu     sync.Mutex
	calls  map[string]int
}

func (c *capStore) note(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[name]++
}

func (c *capStore) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[name]
}

// core is the inner store without capabilities, for the fallbacks.
func (c *capStore) core() blob.Store { return coreStore{c.Store} }

func (c *capStore) Traits() blob.Traits { return c.traits }

func (c *capStore) Rename(ctx context.Context, src, dst string) error {
	c.note(CapRename)
	return blob.Rename(ctx, c.core(), src, dst)
}

func (c *capStore) DeleteTree(ctx context.Context, dir string) error {
	c.note(CapDeleteTree)
	return blob.DeleteTree(ctx, c.core(), dir)
}

func (c *capStore) Lock(ctx context.Context, key string) (func(), error) {
	c.note(CapLock)
	return func() {}, nil
}

func (c *capStore) Copy(ctx context.Context, src, dst, srcVersion string) (blob.Info, error) {
	c.note(CapCopy)
	_, to, err := blob.Copy(ctx, c.core(), src, dst, srcVersion)
	return to, err
}

func (c *capStore) DeleteBatch(ctx context.Context, infos []blob.Info) ([]error, error) {
	c.note(CapDeleteBatch)
	return blob.DeleteBatch(ctx, c.core(), infos)
}

func (c *capStore) Close() error {
	c.note(CapClose)
	return nil
}

// coreStore hides every capability of a store.
type coreStore struct{ s blob.Store }

func (c coreStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	return c.s.Get(ctx, key, limit)
}
func (c coreStore) Stat(ctx context.Context, key string) (blob.Info, error) {
	return c.s.Stat(ctx, key)
}
func (c coreStore) Put(ctx context.Context, key string, data []byte, cond blob.Cond) (blob.Info, error) {
	return c.s.Put(ctx, key, data, cond)
}
func (c coreStore) Delete(ctx context.Context, key string, cond blob.Cond) error {
	return c.s.Delete(ctx, key, cond)
}
func (c coreStore) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return c.s.List(ctx, prefix)
}
