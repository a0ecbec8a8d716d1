package history

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/cloudmem/cloudmem/blob"
)

// Rename moves src (a key, or every key under the directory src) to dst
// with the semantics and errors of blob.Renamer, except that it is never
// atomic: it always moves key by key as blob.Rename's fallback does (each
// file copied with Put(IfAbsent), then its source deleted with
// Delete(IfVersion)), even when the inner store has an atomic rename. That
// is what lets each moved file's record name the exact version it left
// behind and the one it got, which an atomic rename (it returns only an
// error) does not tell. At every instant each file is at its old key, its
// new key or both, never neither.
//
// After the move, each file that moved gets one "renamed" record, stored
// with the new path and naming the old one. A copy whose source could not
// be removed gets a "created" record.
func (s *Store) Rename(ctx context.Context, src, dst string) error {
	if err := check(src); err != nil {
		return err
	}
	if err := check(dst); err != nil {
		return err
	}
	m := &moveLog{inner: s.inner, puts: map[string]movedPut{}, dels: map[string]string{}}
	err := blob.Rename(ctx, m, src, dst)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	for _, to := range slices.Sorted(maps.Keys(m.puts)) {
		p := m.puts[to]
		if _, undone := m.dels[to]; undone {
			continue // a copy removed again by the rollback
		}
		from := src + strings.TrimPrefix(to, dst)
		prev, moved := m.dels[from]
		var h header
		switch {
		case moved && recorded(to) && recorded(from):
			h = header{Op: OpRenamed, Path: to, From: from, Prev: prev, Ver: p.version}
		case moved && recorded(from):
			h = header{Op: OpDeleted, Path: from, Prev: prev}
		case recorded(to):
			h = header{Op: OpCreated, Path: to, Ver: p.version}
		default:
			continue
		}
		if h.Op != OpDeleted {
			h.Size, h.SHA256 = int64(len(p.data)), sum256(p.data)
		}
		content := p.data
		if h.Op == OpDeleted {
			content = nil
		}
		if err := s.record(ctx, &h, content); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// movedPut is the last write a move made at one key.
type movedPut struct {
	data    []byte
	version string
}

// moveLog is the store blob.Rename moves through: the inner store, minus
// the version records, noting every write that lands.
type moveLog struct {
	inner blob.Store
	mu    sync.Mutex
	puts  map[string]movedPut // by key: the last write that landed
	dels  map[string]string   // by key: the version a delete removed
}

func (m *moveLog) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	return m.inner.Get(ctx, key, limit)
}

func (m *moveLog) Stat(ctx context.Context, key string) (blob.Info, error) {
	return m.inner.Stat(ctx, key)
}

func (m *moveLog) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if inNamespace(key) {
		return blob.Info{}, fmt.Errorf("%w: %q is reserved for the version records", blob.ErrInvalidKey, key)
	}
	info, err := m.inner.Put(ctx, key, data, c)
	if err == nil {
		m.mu.Lock()
		m.puts[key] = movedPut{data: data, version: info.Version}
		m.mu.Unlock()
	}
	return info, err
}

func (m *moveLog) Delete(ctx context.Context, key string, c blob.Cond) error {
	err := m.inner.Delete(ctx, key, c)
	if err == nil {
		m.mu.Lock()
		m.dels[key] = c.IfVersion
		m.mu.Unlock()
	}
	return err
}

func (m *moveLog) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return (&Store{inner: m.inner}).List(ctx, prefix)
}

// DeleteTree deletes every key under the directory dir, each with its own
// "deleted" record, with the semantics and errors of blob.TreeDeleter. It
// never uses the inner store's own tree delete, which would not say which
// versions it removed. Each key is deleted conditionally on the version the
// listing showed (re-read when it changed meanwhile).
func (s *Store) DeleteTree(ctx context.Context, dir string) error {
	if err := check(dir); err != nil {
		return err
	}
	infos, err := blob.ListAll(ctx, s, dir+"/")
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		return fmt.Errorf("%q: %w", dir+"/", blob.ErrNotExist)
	}
	var errs []error
	for _, info := range infos {
		err := s.Delete(ctx, info.Key, blob.Cond{IfVersion: info.Version})
		if errors.Is(err, blob.ErrPrecondition) {
			err = s.Delete(ctx, info.Key, blob.Cond{})
		}
		if err != nil && !errors.Is(err, blob.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
