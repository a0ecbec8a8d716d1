package blob

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"
)

// ExpireActor is the actor (see WithActor) of every deletion of an expired
// object: a layer that records changes (the history wrapper) records it
// as the write policy's.
const ExpireActor = "policy:expire"

// Expiry says which objects of a store expire, and when (see WithExpiry).
type Expiry struct {
	// After returns how long after its last change (Info.Modified) the
	// object at key lives, and false when it never expires. It is never
	// asked about a reserved key (IsReserved): bookkeeping never expires.
	// It must be safe for concurrent use.
	After func(key string) (time.Duration, bool)
	// Now is the clock an object's age is measured by; nil means
	// time.Now.
	Now func() time.Time
}

// WithExpiry returns s with the objects that e makes expire hidden and
// deleted. An object expires at the instant its Modified time plus its age
// (e.After) is reached, by e's clock; an object whose store reports no
// Modified time never expires. From that instant on it is absent:
//
//   - Get and Stat answer ErrNotExist, List leaves it out;
//   - a Put with IfAbsent (or with no condition) that meets it deletes it
//     first, at the version it saw, and then writes; so does a Rename or a
//     Copy whose destination it is. On a store with ExclusiveNames, an
//     expired object at an ancestor of the key, or every object beneath
//     the key when all of them expired, is deleted the same way;
//   - a Delete with no condition deletes it and answers ErrNotExist; a
//     Rename of it answers ErrNotExist and moves nothing.
//
// A Put or Delete at a version (IfVersion) is forwarded as it is: the
// caller read that version before it expired, and a change made
// concurrently with the expiry wins over it (as a rewrite wins over a
// sweep, see Expire). Every deletion of an expired object carries the actor
// ExpireActor and is conditional on the version found expired, so a
// concurrent change keeps the object. The Traits are s's with Expires set.
//
// On a store whose listings hide the keys under an object
// (HidesUnderObjects: MinIO), a Put also deletes the expired objects at the
// key's ancestors, which would hide it from listings.
//
// Keys that e never makes expire cost nothing more; for the others, a
// Delete with no condition and a Put with none cost one Stat more, and a
// write refused because the name is taken one Stat more (ancestors on a
// store with ExclusiveNames) before it is known whether the name was
// expired; on a store with HidesUnderObjects, every Put costs one Stat per
// ancestor that may expire. A nil e.After returns s.
//
// The store is safe for concurrent use when s is.
func WithExpiry(s Store, e Expiry) Store {
	if e.After == nil {
		return s
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	return &expiryStore{Forward: Forward{Inner: s}, e: e}
}

// expiryStore is WithExpiry's store.
type expiryStore struct {
	Forward
	e Expiry
}

var (
	_ Tree           = (*expiryStore)(nil)
	_ Copier         = (*expiryStore)(nil)
	_ TraitsReporter = (*expiryStore)(nil)
)

// policed reports whether key may expire.
func (s *expiryStore) policed(key string) bool {
	if key == "" || IsReserved(key) {
		return false
	}
	_, ok := s.e.After(key)
	return ok
}

// expired reports whether the object info describes has expired by now.
func (s *expiryStore) expired(info Info, now time.Time) bool {
	if info.Modified.IsZero() || IsReserved(info.Key) {
		return false
	}
	after, ok := s.e.After(info.Key)
	return ok && !now.Before(info.Modified.Add(after))
}

// errExpired is the ErrNotExist of an expired object.
func errExpired(key string) error {
	return fmt.Errorf("blob: %q expired: %w", key, ErrNotExist)
}

func (s *expiryStore) Traits() Traits {
	t := TraitsOf(s.Inner)
	t.Expires = true
	return t
}

func (s *expiryStore) Get(ctx context.Context, key string, limit int64) ([]byte, Info, error) {
	data, info, err := s.Inner.Get(ctx, key, limit)
	if err == nil && s.expired(info, s.e.Now()) {
		return nil, Info{}, errExpired(key)
	}
	if err == nil {
		s.watch(ctx, info)
	}
	if errors.Is(err, ErrTooLarge) && s.policed(key) {
		// The size is no business of a caller's if the object expired.
		if st, serr := s.Inner.Stat(ctx, key); serr == nil && s.expired(st, s.e.Now()) {
			return nil, Info{}, errExpired(key)
		}
	}
	return data, info, err
}

func (s *expiryStore) Stat(ctx context.Context, key string) (Info, error) {
	info, err := s.Inner.Stat(ctx, key)
	if err == nil && s.expired(info, s.e.Now()) {
		return Info{}, errExpired(key)
	}
	return info, err
}

// List leaves out the expired objects. Under a sweep's context (Expire) it
// yields only them instead.
func (s *expiryStore) List(ctx context.Context, prefix string) iter.Seq2[Info, error] {
	sw := sweepOf(ctx)
	return func(yield func(Info, error) bool) {
		now := s.e.Now()
		for info, err := range s.Inner.List(ctx, prefix) {
			if err != nil {
				yield(Info{}, err)
				return
			}
			if s.expired(info, now) != (sw != nil) {
				continue
			}
			if sw != nil {
				sw.found(info)
			} else {
				s.watch(ctx, info)
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

func (s *expiryStore) Put(ctx context.Context, key string, data []byte, c Cond) (Info, error) {
	info, err := s.put(ctx, key, data, c)
	if err == nil && TraitsOf(s.Inner).HidesUnderObjects {
		s.expireAncestors(ctx, key)
	}
	return info, err
}

// expireAncestors deletes the expired objects at the ancestors of key, a
// key just written, on a store whose listings hide the keys under an
// object (MinIO): there an expired object would hide key from every
// listing until a sweep. A failure leaves it to the sweep.
func (s *expiryStore) expireAncestors(ctx context.Context, key string) {
	for i := strings.LastIndexByte(key, '/'); i > 0; i = strings.LastIndexByte(key[:i], '/') {
		if s.policed(key[:i]) {
			_, _ = s.expireAt(ctx, key[:i])
		}
	}
}

func (s *expiryStore) put(ctx context.Context, key string, data []byte, c Cond) (Info, error) {
	if c.IfVersion != "" || !s.policed(key) {
		return s.Inner.Put(ctx, key, data, c)
	}
	if !c.IfAbsent {
		if _, err := s.clear(ctx, key, false); err != nil {
			return Info{}, err
		}
		return s.Inner.Put(ctx, key, data, c)
	}
	for range clearAttempts {
		info, err := s.Inner.Put(ctx, key, data, c)
		if !errors.Is(err, ErrPrecondition) {
			return info, err
		}
		if cleared, cerr := s.clear(ctx, key, true); cerr != nil || !cleared {
			return Info{}, err
		}
	}
	return s.Inner.Put(ctx, key, data, c)
}

// clearAttempts bounds how often a write that met an expired object
// deletes one and tries again: each attempt deletes one.
const clearAttempts = 4

// clear deletes the expired object at key, if there is one; with names,
// on a store with ExclusiveNames, also an expired object at an ancestor of
// key, or every object beneath key when all of them expired (what keeps a
// Put of key from succeeding there). It reports whether it deleted any.
func (s *expiryStore) clear(ctx context.Context, key string, names bool) (bool, error) {
	exclusive := names && TraitsOf(s.Inner).ExclusiveNames
	info, err := s.Inner.Stat(ctx, key)
	switch {
	case errors.Is(err, ErrNotExist) && !exclusive:
		return true, nil // gone since the write was refused: the name is free
	case err == nil && s.expired(info, s.e.Now()):
		return s.expireObject(ctx, info)
	case err == nil || !exclusive:
		return false, err
	}
	for i := strings.LastIndexByte(key, '/'); i > 0; i = strings.LastIndexByte(key[:i], '/') {
		if !s.policed(key[:i]) {
			continue
		}
		if cleared, err := s.expireAt(ctx, key[:i]); err != nil || cleared {
			return cleared, err
		}
	}
	return s.expireBeneath(ctx, key)
}

// expireAt deletes the object at key if it has expired, and reports
// whether it did.
func (s *expiryStore) expireAt(ctx context.Context, key string) (bool, error) {
	info, err := s.Inner.Stat(ctx, key)
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	if err != nil || !s.expired(info, s.e.Now()) {
		return false, err
	}
	return s.expireObject(ctx, info)
}

// expireBeneath deletes every object beneath key when each of them has
// expired (one that has not keeps them all), and reports whether it did.
func (s *expiryStore) expireBeneath(ctx context.Context, key string) (bool, error) {
	infos, err := ListAll(ctx, s.Inner, key+"/")
	if err != nil || len(infos) == 0 {
		return false, err
	}
	now := s.e.Now()
	for _, info := range infos {
		if !s.expired(info, now) {
			return false, nil
		}
	}
	deleted := false
	for _, info := range infos {
		ok, err := s.expireObject(ctx, info)
		if err != nil {
			return deleted, err
		}
		deleted = deleted || ok
	}
	return deleted, nil
}

// expireObject deletes the expired object info at its version, as
// ExpireActor, and reports whether the object is gone: deleted, or deleted
// by another (a sweep) meanwhile. A concurrent change keeps it: false.
func (s *expiryStore) expireObject(ctx context.Context, info Info) (bool, error) {
	err := s.Inner.Delete(WithActor(ctx, ExpireActor), info.Key, Cond{IfVersion: info.Version})
	switch {
	case err == nil, errors.Is(err, ErrNotExist):
		return true, nil
	case errors.Is(err, ErrPrecondition):
		return false, nil
	}
	return false, err
}

func (s *expiryStore) Delete(ctx context.Context, key string, c Cond) error {
	if c != (Cond{}) || !s.policed(key) {
		return s.Inner.Delete(ctx, key, c)
	}
	if err := CheckDelete(ctx, key, c); err != nil {
		return err
	}
	info, err := s.Inner.Stat(ctx, key)
	if err != nil {
		return err
	}
	if s.expired(info, s.e.Now()) {
		if _, err := s.expireObject(ctx, info); err != nil {
			return err
		}
		return errExpired(key)
	}
	return s.Inner.Delete(ctx, key, c)
}

// Rename refuses to move an expired src (ErrNotExist), and deletes an
// expired dst that is in the way.
func (s *expiryStore) Rename(ctx context.Context, src, dst string) error {
	if _, ok := s.Inner.(Tree); !ok {
		return errors.ErrUnsupported
	}
	if s.policed(src) {
		if gone, err := s.expireAt(ctx, src); err != nil || gone {
			if err == nil {
				err = errExpired(src)
			}
			return err
		}
	}
	err := s.Forward.Rename(ctx, src, dst)
	for range clearAttempts {
		if !errors.Is(err, ErrPrecondition) || !s.policed(dst) {
			return err
		}
		if cleared, cerr := s.clear(ctx, dst, true); cerr != nil || !cleared {
			return err
		}
		err = s.Forward.Rename(ctx, src, dst)
	}
	return err
}

// Copy deletes an expired dst that is in the way.
func (s *expiryStore) Copy(ctx context.Context, src, dst, srcVersion string) (Info, error) {
	info, err := s.Forward.Copy(ctx, src, dst, srcVersion)
	for range clearAttempts {
		if !errors.Is(err, ErrPrecondition) || !s.policed(dst) {
			return info, err
		}
		if cleared, cerr := s.clear(ctx, dst, true); cerr != nil || !cleared {
			return info, err
		}
		info, err = s.Forward.Copy(ctx, src, dst, srcVersion)
	}
	return info, err
}

// watch notes, for a reader that watches expiries (WatchExpiry), when the
// live object info expires.
func (s *expiryStore) watch(ctx context.Context, info Info) {
	w, _ := ctx.Value(watchKey{}).(*ExpiryWatch)
	if w == nil || info.Modified.IsZero() || IsReserved(info.Key) {
		return
	}
	if after, ok := s.e.After(info.Key); ok {
		w.note(info.Modified.Add(after), s.e.Now)
	}
}

// watchKey is the context key of an ExpiryWatch.
type watchKey struct{}

// An ExpiryWatch learns, from the reads made with its context (see
// Watch), when the first object they returned expires: for a reader
// that keeps what it read (an index) and must forget an object the instant
// it expires (package search refreshes then). It is safe for concurrent
// use.
type ExpiryWatch struct {
	mu   sync.Mutex
	next time.Time        // the earliest expiry noted; zero: none
	now  func() time.Time // the clock of the store that noted it
}

// Watch returns a copy of ctx that makes every expiring store
// (WithExpiry) that a Get or a List passes through note on w when each
// object it returns expires. The zero ExpiryWatch is ready to use.
func (w *ExpiryWatch) Watch(ctx context.Context) context.Context {
	return context.WithValue(ctx, watchKey{}, w)
}

func (w *ExpiryWatch) note(at time.Time, now func() time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next.IsZero() || at.Before(w.next) {
		w.next, w.now = at, now
	}
}

// Due reports whether an object that a read made with w's context returned
// has expired since, by its store's clock. A nil w is never due.
func (w *ExpiryWatch) Due() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.next.IsZero() && !w.now().Before(w.next)
}

// sweepKey is the context key of a sweep (Expire).
type sweepKey struct{}

// sweep is what an Expire's listing learns from the expiring stores it
// passes through: the objects they found expired, by their own keys and
// versions (a layer above may put a prefix or a mount's name before a key).
type sweep struct {
	mu      sync.Mutex
	expired map[string]bool // key + "\x00" + version
}

func sweepOf(ctx context.Context) *sweep {
	sw, _ := ctx.Value(sweepKey{}).(*sweep)
	return sw
}

func (sw *sweep) found(info Info) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.expired[info.Key+"\x00"+info.Version] = true
}

// has reports whether an expiring store found the object info (a key of
// the store Expire was given) expired: info's key, or one of its tails
// after a '/', at info's version.
func (sw *sweep) has(info Info) bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	for key := info.Key; ; {
		if sw.expired[key+"\x00"+info.Version] {
			return true
		}
		_, rest, ok := strings.Cut(key, "/")
		if !ok {
			return false
		}
		key = rest
	}
}

// Expire is the sweep of expired objects: it lists the objects of s that
// an expiring store (WithExpiry) finds expired (s itself, or each mount of
// a mount table whose store expires), and deletes each (unless dryRun) with
// a Delete at the version it listed, as ExpireActor. It yields each object
// it deleted (with dryRun: each it would delete), with the key s names it
// by, and stops at the first error, which it yields. An object changed or
// deleted since it was listed is kept, or left to whoever deleted it, and
// not yielded: a concurrent change wins, so sweeps may run at once, on many
// machines, and beside writers. A store with no expiring store
// (Traits.Expires, on no mount either) yields nothing and makes no call.
//
// The listing is one List of s (of each expiring mount): the expiring store
// lists its objects and yields only the expired ones under the sweep's
// context. Then one Delete per expired object.
func Expire(ctx context.Context, s Store, dryRun bool) iter.Seq2[Info, error] {
	return func(yield func(Info, error) bool) {
		var dirs []string
		t := TraitsOf(s)
		if t.Expires {
			dirs = []string{""}
		}
		for _, m := range t.Mounts {
			if m.Expires && !t.Expires {
				dirs = append(dirs, m.Name+"/")
			}
		}
		var found []Info
		for _, dir := range dirs {
			sw := &sweep{expired: map[string]bool{}}
			for info, err := range s.List(context.WithValue(ctx, sweepKey{}, sw), dir) {
				if err != nil {
					yield(Info{}, err)
					return
				}
				if sw.has(info) {
					found = append(found, info)
				}
			}
		}
		for _, info := range found {
			if !dryRun {
				err := s.Delete(WithActor(ctx, ExpireActor), info.Key, Cond{IfVersion: info.Version})
				if errors.Is(err, ErrPrecondition) || errors.Is(err, ErrNotExist) {
					continue // changed since (a concurrent change wins), or deleted by another
				}
				if err != nil {
					yield(Info{}, err)
					return
				}
			}
			if !yield(info, nil) {
				return
			}
		}
	}
}

// HasExpiry reports whether objects of s expire (WithExpiry): in s itself,
// or in a mount of a mount table.
func HasExpiry(s Store) bool {
	t := TraitsOf(s)
	if t.Expires {
		return true
	}
	for _, m := range t.Mounts {
		if m.Expires {
			return true
		}
	}
	return false
}
