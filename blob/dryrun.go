package blob

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DryRun returns a store that reads s and keeps its own writes: a Put or
// Delete through it is checked as s would check it (the key, the Cond,
// against what s holds and what earlier writes through it left) and is then
// seen by the reads through it, but nothing reaches s. A command run over
// it makes the checks and answers of a real run and changes nothing: the
// CLI's --dry-run. The writes live in memory until the store is dropped.
//
// It reports s's Traits (so a read-only store or mount refuses as it
// would). It offers Tree when s does, so that a command makes the same
// kind of move as over s (an atomic rename reads no content; a move by
// copy does), and no other optional capability: a tree delete is made of
// the calls above. Writes of other writers to s meanwhile are seen where
// no write through it covers them. It is safe for concurrent use when s
// is.
func DryRun(s Store) Store {
	return &dryRun{inner: s, own: map[string]*dryEntry{}}
}

type dryRun struct {
	inner Store
	mu    sync.Mutex
	own   map[string]*dryEntry // the writes made through it; nil data: deleted
	n     int                  // versions made
}

// dryEntry is a key as the writes through a dryRun left it.
type dryEntry struct {
	data    []byte
	info    Info
	deleted bool
	from    string // moved by Rename: the content is what key from had in the inner store
}

func (d *dryRun) Traits() Traits {
	t := TraitsOf(d.inner)
	t.ExclusiveNames = false // the writes it keeps to itself are not checked so
	return t
}

// entry returns the write through d that covers key, if any. d.mu is held.
func (d *dryRun) entry(key string) (*dryEntry, bool) {
	e, ok := d.own[key]
	return e, ok
}

// begin reports what stops a call before it starts: a done context.
func begin(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("blob: dry run: %w", err)
	}
	return nil
}

func (d *dryRun) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	if err := CheckLimit(limit); err != nil {
		return nil, Info{}, err
	}
	if err := begin(ctx); err != nil {
		return nil, Info{}, err
	}
	d.mu.Lock()
	e, ok := d.entry(key)
	d.mu.Unlock()
	if !ok {
		return d.inner.Get(ctx, key, limit)
	}
	switch {
	case e.deleted:
		return nil, Info{}, fmt.Errorf("blob: dry run: %q: %w", key, ErrNotExist)
	case e.from != "":
		data, _, err := d.inner.Get(ctx, e.from, limit)
		if err != nil {
			return nil, Info{}, err
		}
		return data, e.info, nil
	case int64(len(e.data)) > limit:
		return nil, Info{}, &TooLargeError{Key: key, Size: int64(len(e.data)), Limit: limit}
	}
	return slices.Clone(e.data), e.info, nil
}

func (d *dryRun) Stat(ctx context.Context, key string) (Info, error) {
	if err := begin(ctx); err != nil {
		return Info{}, err
	}
	d.mu.Lock()
	e, ok := d.entry(key)
	d.mu.Unlock()
	if !ok {
		return d.inner.Stat(ctx, key)
	}
	if e.deleted {
		return Info{}, fmt.Errorf("blob: dry run: %q: %w", key, ErrNotExist)
	}
	return e.info, nil
}

// current returns the version key has through d ("" when it does not
// exist). d.mu is held; s's Stat is called under it, so that two writes
// through d check and land one after the other.
func (d *dryRun) current(ctx context.Context, key string) (string, error) {
	if e, ok := d.entry(key); ok {
		if e.deleted {
			return "", nil
		}
		return e.info.Version, nil
	}
	info, err := d.inner.Stat(ctx, key)
	switch {
	case err == nil:
		return info.Version, nil
	case errors.Is(err, ErrNotExist):
		return "", nil
	}
	return "", err
}

// check enforces c on key as a store would. d.mu is held.
func (d *dryRun) check(ctx context.Context, key string, c Cond) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if !c.IfAbsent && c.IfVersion == "" {
		return nil
	}
	v, err := d.current(ctx, key)
	switch {
	case err != nil:
		return err
	case c.IfAbsent && v != "", c.IfVersion != "" && v != c.IfVersion:
		return fmt.Errorf("blob: dry run: %q: %w", key, ErrPrecondition)
	}
	return nil
}

func (d *dryRun) Put(ctx context.Context, key string, data []byte, c Cond) (Info, error) {
	if err := begin(ctx); err != nil {
		return Info{}, err
	}
	if IsReadOnly(d.inner) {
		return Info{}, fmt.Errorf("blob: dry run: %q: %w", key, ErrReadOnly)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(ctx, key, c); err != nil {
		return Info{}, err
	}
	d.n++
	info := Info{Key: key, Size: int64(len(data)), Version: "dry-run-" + strconv.Itoa(d.n), Modified: time.Now()}
	d.own[key] = &dryEntry{data: slices.Clone(data), info: info}
	return info, nil
}

func (d *dryRun) Delete(ctx context.Context, key string, c Cond) error {
	if err := begin(ctx); err != nil {
		return err
	}
	if IsReadOnly(d.inner) {
		return fmt.Errorf("blob: dry run: %q: %w", key, ErrReadOnly)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.check(ctx, key, c); err != nil {
		return err
	}
	if v, err := d.current(ctx, key); err != nil {
		return err
	} else if v == "" {
		return fmt.Errorf("blob: dry run: %q: %w", key, ErrNotExist)
	}
	d.own[key] = &dryEntry{deleted: true}
	return nil
}

// List merges s's listing with the writes through d, in key order.
func (d *dryRun) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		d.mu.Lock()
		var keys []string
		own := map[string]dryEntry{}
		for k, e := range d.own {
			if strings.HasPrefix(k, prefix) {
				keys = append(keys, k)
				own[k] = *e
			}
		}
		d.mu.Unlock()
		slices.Sort(keys)
		emit := func(k string) bool { // one of the writes through d
			e := own[k]
			return e.deleted || yield(e.info, nil)
		}
		for info, err := range d.inner.List(ctx, prefix) {
			if err != nil {
				yield(Info{}, err)
				return
			}
			for len(keys) > 0 && keys[0] < info.Key {
				if !emit(keys[0]) {
					return
				}
				keys = keys[1:]
			}
			if len(keys) > 0 && keys[0] == info.Key {
				if !emit(keys[0]) {
					return
				}
				keys = keys[1:]
				continue
			}
			if !yield(info, nil) {
				return
			}
		}
		for _, k := range keys {
			if !emit(k) {
				return
			}
		}
	}
}

var _ Tree = (*dryRun)(nil)

// DeleteTree answers errors.ErrUnsupported: a tree delete in a dry run is
// made of the listing and deletes above, so that it reads and refuses as
// the real one does.
func (d *dryRun) DeleteTree(ctx context.Context, dir string) error {
	return fmt.Errorf("blob: dry run: %w", errors.ErrUnsupported)
}

// Rename checks a move as s's Tree would (src exists as a key or a
// directory, dst exists as neither) and makes it in the dry run's own
// entries, reading no content; errors.ErrUnsupported when s has no
// Tree, so that the caller moves by copying.
func (d *dryRun) Rename(ctx context.Context, src, dst string) error {
	if _, ok := d.inner.(Tree); !ok {
		return fmt.Errorf("blob: dry run: %w", errors.ErrUnsupported)
	}
	if err := begin(ctx); err != nil {
		return err
	}
	if IsReadOnly(d.inner) {
		return fmt.Errorf("blob: dry run: %q: %w", src, ErrReadOnly)
	}
	if err := CheckKey(src); err != nil {
		return err
	}
	if err := CheckKey(dst); err != nil {
		return err
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return fmt.Errorf("blob: dry run: rename %q to %q: %w", src, dst, ErrInvalidKey)
	}
	var moved []Info
	if info, err := d.Stat(ctx, src); err == nil {
		moved = []Info{info}
	} else if !errors.Is(err, ErrNotExist) {
		return err
	} else if moved, err = ListAll(ctx, d, src+"/"); err != nil {
		return err
	} else if len(moved) == 0 {
		return fmt.Errorf("blob: dry run: %q: %w", src, ErrNotExist)
	}
	if _, err := d.Stat(ctx, dst); err == nil {
		return fmt.Errorf("blob: dry run: %q: %w", dst, ErrPrecondition)
	} else if !errors.Is(err, ErrNotExist) {
		return err
	}
	if under, err := ListAll(ctx, d, dst+"/"); err != nil {
		return err
	} else if len(under) > 0 {
		return fmt.Errorf("blob: dry run: %q: %w", dst, ErrPrecondition)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, info := range moved {
		to := dst + info.Key[len(src):]
		e := &dryEntry{from: info.Key}
		if own, ok := d.own[info.Key]; ok { // written through the dry run: its own content
			e = &dryEntry{data: own.data, from: own.from}
		}
		d.n++
		e.info = Info{Key: to, Size: info.Size, Version: "dry-run-" + strconv.Itoa(d.n), Modified: time.Now()}
		d.own[to] = e
		d.own[info.Key] = &dryEntry{deleted: true}
	}
	return nil
}

// Close closes s.
func (d *dryRun) Close() error { return Close(d.inner) }
