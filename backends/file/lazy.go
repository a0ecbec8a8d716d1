package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"sync"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/internal/keylock"
)

// ErrNoStore is the error of opening a directory that does not exist for
// reading only (a file URL with readonly=true, or storeurl.OpenReadOnly):
// nothing would ever create it. The error names the directory.
var ErrNoStore = errors.New("the store does not exist")

// lazyStore is the store of a directory that did not exist when it was
// opened (Options.CreateOnWrite). Until the first write it answers like an
// empty store and touches nothing; the first Put opens the store with
// open, which creates the directory, and from then on every call goes to
// that store. Any other call that finds the directory created meanwhile
// (by another process) opens it too. It forwards every capability of the
// store it opens. It is safe for concurrent use.
type lazyStore struct {
	dir  string                                        // the directory; missing when the lazyStore was made
	open func(ctx context.Context) (blob.Store, error) // opens (and creates) the store

	mu    sync.Mutex
	inner blob.Store    // nil until opened
	local keylock.Locks // every Lock takes its key's here first
}

var (
	_ blob.Tree           = (*lazyStore)(nil)
	_ blob.Locker         = (*lazyStore)(nil)
	_ blob.TraitsReporter = (*lazyStore)(nil)
)

// store returns the opened store. When none is open yet, create opens it;
// otherwise it is opened only if the directory exists by now, and nil is
// returned when it does not.
func (l *lazyStore) store(ctx context.Context, create bool) (blob.Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inner != nil {
		return l.inner, nil
	}
	if !create {
		if _, err := os.Stat(l.dir); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	}
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	l.inner = s
	return s, nil
}

// opened returns the opened store, or nil, without opening one.
func (l *lazyStore) opened() blob.Store {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inner
}

func (l *lazyStore) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	s, err := l.store(ctx, false)
	if err != nil || s == nil {
		if err == nil {
			err = blob.CheckLimit(limit)
		}
		return nil, blob.Info{}, l.missing(ctx, key, err)
	}
	return s.Get(ctx, key, limit)
}

func (l *lazyStore) Stat(ctx context.Context, key string) (blob.Info, error) {
	s, err := l.store(ctx, false)
	if err != nil || s == nil {
		return blob.Info{}, l.missing(ctx, key, err)
	}
	return s.Stat(ctx, key)
}

// missing is the error of a read of key from a store that does not exist:
// err when opening failed, else ctx's error or blob.ErrNotExist, after the
// checks every store makes.
func (l *lazyStore) missing(ctx context.Context, key string, err error) error {
	switch {
	case err != nil:
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	}
	if err := blob.CheckKey(key); err != nil {
		return err
	}
	return fmt.Errorf("%q: %w", key, blob.ErrNotExist)
}

func (l *lazyStore) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	if err := blob.CheckKey(key); err != nil {
		return blob.Info{}, err // refused before the directory is made
	}
	if c.IfVersion != "" && l.opened() == nil {
		if _, err := os.Stat(l.dir); errors.Is(err, fs.ErrNotExist) {
			return blob.Info{}, fmt.Errorf("%q: %w", key, blob.ErrPrecondition) // no object has that version
		}
	}
	s, err := l.store(ctx, true)
	if err != nil {
		return blob.Info{}, err
	}
	return s.Put(ctx, key, data, c)
}

func (l *lazyStore) Delete(ctx context.Context, key string, c blob.Cond) error {
	s, err := l.store(ctx, false)
	if err != nil {
		return err
	}
	if s == nil {
		if err := blob.CheckDelete(ctx, key, c); err != nil {
			return err
		}
		return fmt.Errorf("%q: %w", key, blob.ErrNotExist)
	}
	return s.Delete(ctx, key, c)
}

func (l *lazyStore) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return func(yield func(blob.Info, error) bool) {
		s, err := l.store(ctx, false)
		switch {
		case err != nil:
			yield(blob.Info{}, err)
		case s != nil:
			for info, err := range s.List(ctx, prefix) {
				if !yield(info, err) {
					return
				}
			}
		case ctx.Err() != nil:
			yield(blob.Info{}, ctx.Err())
		default:
			if err := blob.CheckPrefix(prefix); err != nil {
				yield(blob.Info{}, err)
			}
		}
	}
}

func (l *lazyStore) Rename(ctx context.Context, src, dst string) error {
	s, err := l.store(ctx, false)
	if err != nil {
		return err
	}
	if s == nil {
		if err := blob.CheckKey(dst); err != nil {
			return err
		}
		return l.missing(ctx, src, nil)
	}
	return blob.Rename(ctx, s, src, dst)
}

func (l *lazyStore) DeleteTree(ctx context.Context, dir string) error {
	s, err := l.store(ctx, false)
	if err != nil {
		return err
	}
	if s == nil {
		if err := ctx.Err(); err != nil {
			return err
		}
		return fmt.Errorf("%q: %w", dir+"/", blob.ErrNotExist) // nothing beneath dir
	}
	return blob.DeleteTree(ctx, s, dir)
}

// Lock takes the key's lock in this process, then, when the directory
// exists, the opened store's lock, which excludes other processes too.
// While the directory is missing there is no lock file to take, and
// creating the directory would leave one behind a command that writes
// nothing; so until then only the callers in this process are excluded,
// and a process that creates the directory meanwhile can hold the key's
// lock at the same time (its conditional writes still decide).
func (l *lazyStore) Lock(ctx context.Context, key string) (func(), error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return nil, err
	}
	unlockHere, err := l.local.Lock(ctx, key)
	if err != nil {
		return nil, err
	}
	s, err := l.store(ctx, false)
	if err != nil || s == nil {
		if err != nil {
			unlockHere()
			return nil, err
		}
		return unlockHere, nil
	}
	unlockStore, err := blob.Lock(ctx, s, key)
	if err != nil {
		unlockHere()
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			unlockStore()
			unlockHere()
		})
	}, nil
}

// Traits are the file store's, before and after the directory is made.
func (l *lazyStore) Traits() blob.Traits {
	if s := l.opened(); s != nil {
		return blob.TraitsOf(s)
	}
	return blob.Traits{KeyBudget: blob.MaxKeyLen, ExclusiveNames: true}
}

// Close closes the opened store, if any.
func (l *lazyStore) Close() error {
	if s := l.opened(); s != nil {
		return blob.Close(s)
	}
	return nil
}
