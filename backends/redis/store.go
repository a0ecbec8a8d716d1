package redis

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
)

// URL schemes this package registers with storeurl.
const (
	Scheme           = "redis"          // one server, plain TCP
	SchemeTLS        = "rediss"         // one server, TLS
	SchemeCluster    = "redis-cluster"  // Redis Cluster, plain TCP
	SchemeClusterTLS = "rediss-cluster" // Redis Cluster, TLS
)

const (
	listPageSize = 1000        // index members per List page
	markTTL      = time.Minute // how long a write's outcome is kept for retries
)

// Options configures a store. A nil *Options is the zero value.
type Options struct {
	// Prefix names the store within the Redis database: stores with
	// different prefixes have disjoint keys, and a store sees nothing of
	// any other. Surrounding '/' are dropped; the rest must be a valid blob
	// key without '{' or '}'. "" means DefaultPrefix.
	Prefix string

	// Timeout is the deadline of each storage call (see blob.WithTimeout), and of
	// loading the scripts in Open:
	// a call the server has not answered by then fails with
	// blob.ErrTimeout. Zero means blob.DefaultTimeout (30s). The URL
	// parameter timeout= sets it.
	Timeout time.Duration

	// lockLease replaces lockLease, for the tests of a lost lease.
	lockLease time.Duration
}

// Open returns a store over client, which may be a *goredis.Client, a
// *goredis.ClusterClient or any other UniversalClient; the store does not
// take ownership of it (closing the store leaves client open). Open loads
// the store's Lua scripts into the server, so an unreachable server or a
// wrong password is reported here. A nil opts means the zero Options.
//
// The store is safe for concurrent use. It needs Redis 5.0 or later. Its
// calls return as soon as their context is done; with ContextTimeoutEnabled
// set on client (the URL opener sets it), go-redis also applies a context's
// deadline to the connection, so that an abandoned command stops early too.
func Open(ctx context.Context, client goredis.UniversalClient, opts *Options) (blob.Store, error) {
	return open(ctx, client, opts, false, "", true)
}

// timeout is the per-call deadline opts asks for.
func (o *Options) timeout() time.Duration {
	if o == nil || o.Timeout <= 0 {
		return blob.DefaultTimeout
	}
	return o.Timeout
}

// open is Open for a client the store may own (owned: Close closes it) and
// whose password (secret) must never appear in an error. Without load it
// does not load the scripts, and so makes no call: each script is then
// loaded by its first run (EVALSHA, falling back to EVAL), and a server
// that is down at open serves once it is back.
func open(ctx context.Context, client goredis.UniversalClient, opts *Options, owned bool, secret string, load bool) (blob.Store, error) {
	if client == nil {
		return nil, errors.New("redis: Open: nil client")
	}
	if opts == nil {
		opts = &Options{}
	}
	prefix, err := checkPrefix(opts.Prefix)
	if err != nil {
		return nil, err
	}
	s := &store{client: client, keys: newKeys(prefix), owned: owned, secret: secret, lease: lockLease}
	if opts.lockLease > 0 {
		s.lease = opts.lockLease
	}
	if err := ctx.Err(); err != nil {
		return nil, s.wrapErr(ctx, "open", prefix, nil, err)
	}
	if !load {
		return blob.WithTimeout(s, opts.timeout()), nil
	}
	lctx, cancel := context.WithTimeout(ctx, opts.timeout())
	defer cancel()
	for _, sc := range scripts {
		if _, err := call(lctx, func() (string, error) { return sc.Load(lctx, client).Result() }); err != nil {
			if lctx.Err() != nil && ctx.Err() == nil {
				err = &blob.TimeoutError{Op: "open", Key: prefix, After: opts.timeout(), Err: err}
			}
			return nil, s.wrapErr(ctx, "open", prefix, nil, err)
		}
	}
	return blob.WithTimeout(s, opts.timeout()), nil
}

// store is the blob.Store over one prefix of one Redis database.
type store struct {
	client goredis.UniversalClient
	keys   keys
	owned  bool   // Close closes client
	secret string // the password, scrubbed from errors
	lease  time.Duration
	// leases holds, for each key locked through this store, its holder's
	// token, which fences the Puts of that key (see Lock).
	leases sync.Map
}

var (
	_ blob.Tree = (*store)(nil)
	_ io.Closer = (*store)(nil)
)

// Close closes the Redis client if the store created it (opened from a URL);
// a store from Open leaves its caller's client open and Close does nothing.
func (s *store) Close() error {
	if !s.owned {
		return nil
	}
	return s.client.Close()
}

func (s *store) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return nil, blob.Info{}, err
	}
	if err := blob.CheckLimit(limit); err != nil {
		return nil, blob.Info{}, err
	}
	vals, err := call(ctx, func() ([]any, error) {
		return getScript.Run(ctx, s.client, []string{s.keys.object(key)}, limit).Slice()
	})
	if err != nil {
		return nil, blob.Info{}, s.wrapErr(ctx, "get", key, nil, err)
	}
	if len(vals) == 1 {
		size, _ := vals[0].(int64)
		return nil, blob.Info{}, &blob.TooLargeError{Key: key, Size: size, Limit: limit}
	}
	if len(vals) != 4 {
		return nil, blob.Info{}, s.wrapErr(ctx, "get", key, nil, fmt.Errorf("get script returned %d values", len(vals)))
	}
	if vals[0] == nil || vals[1] == nil {
		return nil, blob.Info{}, s.wrapErr(ctx, "get", key, blob.ErrNotExist, nil)
	}
	data, ok := vals[0].(string)
	if !ok {
		return nil, blob.Info{}, s.wrapErr(ctx, "get", key, nil, fmt.Errorf("data field is a %T", vals[0]))
	}
	info, err := parseInfo(key, vals[1], vals[2], vals[3])
	if err != nil {
		return nil, blob.Info{}, s.wrapErr(ctx, "get", key, nil, err)
	}
	return []byte(data), info, nil
}

func (s *store) Stat(ctx context.Context, key string) (blob.Info, error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return blob.Info{}, err
	}
	vals, err := call(ctx, func() ([]any, error) {
		return s.client.HMGet(ctx, s.keys.object(key), "v", "s", "m").Result()
	})
	if err != nil {
		return blob.Info{}, s.wrapErr(ctx, "stat", key, nil, err)
	}
	if vals[0] == nil {
		return blob.Info{}, s.wrapErr(ctx, "stat", key, blob.ErrNotExist, nil)
	}
	info, err := parseInfo(key, vals[0], vals[1], vals[2])
	if err != nil {
		return blob.Info{}, s.wrapErr(ctx, "stat", key, nil, err)
	}
	return info, nil
}

var _ blob.TraitsReporter = (*store)(nil)

// Traits implements blob.TraitsReporter: the scripts keep a name from
// being both an object and a directory (blob.Traits.ExclusiveNames).
func (s *store) Traits() blob.Traits {
	return blob.Traits{KeyBudget: blob.MaxKeyLen, ExclusiveNames: true}
}

func (s *store) Put(ctx context.Context, key string, data []byte, c blob.Cond) (blob.Info, error) {
	if err := blob.CheckCall(ctx, key); err != nil {
		return blob.Info{}, err
	}
	if err := c.Validate(); err != nil {
		return blob.Info{}, err
	}
	mode, version := condArgs(c)
	k := s.keys
	// A copy: call may return (on cancellation) while the command is still
	// being sent, and the caller may then reuse data.
	body := string(data)
	keys := []string{k.idx, k.seq, k.writeMark(rand.Text()), k.object(key)}
	args := []any{key, body, mode, version, markTTL.Milliseconds()}
	token, held := s.leases.Load(key)
	if held {
		keys, args = append(keys, k.lockName(key)), append(args, token)
	}
	res, err := call(ctx, func() ([]any, error) {
		return putScript.Run(ctx, s.client, keys, args...).Slice()
	})
	if err != nil {
		return blob.Info{}, s.wrapErr(ctx, "put", key, nil, err)
	}
	if len(res) > 0 && res[0] == int64(-1) {
		// The lease was lost: this write is refused as a lost race, and
		// the fence is dropped, so that the caller's next attempt (a
		// conditional write after a fresh read) is judged by its condition
		// alone rather than refused again and again.
		s.leases.CompareAndDelete(key, token)
		return blob.Info{}, s.wrapErr(ctx, "put", key, blob.ErrPrecondition, nil)
	}
	if len(res) == 0 || res[0] != int64(1) {
		return blob.Info{}, s.wrapErr(ctx, "put", key, blob.ErrPrecondition, nil)
	}
	var ver, mtime string
	if len(res) == 2 {
		out, _ := res[1].(string)
		ver, mtime, _ = strings.Cut(out, " ")
	}
	info, err := parseInfo(key, ver, strconv.Itoa(len(data)), mtime)
	if err != nil {
		return blob.Info{}, s.wrapErr(ctx, "put", key, nil, err)
	}
	return info, nil
}

func (s *store) Delete(ctx context.Context, key string, c blob.Cond) error {
	if err := blob.CheckDelete(ctx, key, c); err != nil {
		return err
	}
	mode, version := condArgs(c)
	k := s.keys
	n, err := call(ctx, func() (int, error) {
		return deleteScript.Run(ctx, s.client,
			[]string{k.idx, k.writeMark(rand.Text()), k.object(key)},
			key, mode, version, markTTL.Milliseconds()).Int()
	})
	switch {
	case err != nil:
		return s.wrapErr(ctx, "delete", key, nil, err)
	case n == 0 && c.IfVersion != "":
		// A missing object has no version, so the condition failed; this
		// matches what the in-memory store reports.
		return s.wrapErr(ctx, "delete", key, blob.ErrPrecondition, nil)
	case n == 0:
		return s.wrapErr(ctx, "delete", key, blob.ErrNotExist, nil)
	case n < 0:
		return s.wrapErr(ctx, "delete", key, blob.ErrPrecondition, nil)
	}
	return nil
}

// List pages through the index, listPageSize members per page. Each page
// is read by one script, together with the metadata of its objects, so a
// page is a consistent snapshot; a listing of more than one page is not.
func (s *store) List(ctx context.Context, prefix string) iter.Seq2[blob.Info, error] {
	return blob.CheckedList(ctx, prefix, func(yield func(blob.Info, error) bool) {
		lo, hi := lexRange(prefix)
		for {
			infos, last, more, err := s.listPage(ctx, prefix, lo, hi)
			if err != nil {
				yield(blob.Info{}, err)
				return
			}
			for _, info := range infos {
				if !yield(info, nil) {
					return
				}
			}
			if !more {
				return
			}
			if err := ctx.Err(); err != nil {
				yield(blob.Info{}, s.wrapErr(ctx, "list", prefix, nil, err))
				return
			}
			lo = "(" + last
		}
	})
}

// listPage reads one page of the index from lo to hi. more reports whether
// the page was full, so that another may follow after last.
func (s *store) listPage(ctx context.Context, prefix, lo, hi string) (infos []blob.Info, last string, more bool, err error) {
	res, err := call(ctx, func() ([]any, error) {
		return listScript.Run(ctx, s.client, []string{s.keys.idx}, s.keys.obj, lo, hi, listPageSize).Slice()
	})
	if err != nil {
		return nil, "", false, s.wrapErr(ctx, "list", prefix, nil, err)
	}
	if len(res) < 2 || (len(res)-2)%4 != 0 {
		return nil, "", false, s.wrapErr(ctx, "list", prefix, nil, fmt.Errorf("malformed script reply of %d values", len(res)))
	}
	n, _ := res[0].(int64)
	last, _ = res[1].(string)
	infos = make([]blob.Info, 0, (len(res)-2)/4)
	for i := 2; i < len(res); i += 4 {
		key, _ := res[i].(string)
		if blob.CheckKey(key) != nil {
			continue // put there by another program: not reachable through this store
		}
		info, err := parseInfo(key, res[i+1], res[i+2], res[i+3])
		if err != nil {
			return nil, "", false, s.wrapErr(ctx, "list", prefix, nil, err)
		}
		infos = append(infos, info)
	}
	return infos, last, n == listPageSize, nil
}

// Rename implements blob.Tree: one script moves the object or the whole
// tree, so a concurrent reader sees all of it at src or all of it at dst.
func (s *store) Rename(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := blob.CheckKey(src); err != nil {
		return err
	}
	if err := blob.CheckKey(dst); err != nil {
		return err
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return fmt.Errorf("redis: rename %q: %w: cannot move it into itself (%q)", src, blob.ErrInvalidKey, dst)
	}
	k := s.keys
	n, err := call(ctx, func() (int, error) {
		return renameScript.Run(ctx, s.client,
			[]string{k.idx, k.seq, k.writeMark(rand.Text())},
			k.obj, src, dst, markTTL.Milliseconds()).Int()
	})
	switch {
	case err != nil:
		return s.wrapErr(ctx, "rename", src, nil, err)
	case n == 0:
		return s.wrapErr(ctx, "rename", src, blob.ErrNotExist, nil)
	case n < 0:
		return s.wrapErr(ctx, "rename", src, fmt.Errorf("%w: destination %q exists", blob.ErrPrecondition, dst), nil)
	}
	return nil
}

// DeleteTree implements blob.Tree: one script deletes the whole tree.
func (s *store) DeleteTree(ctx context.Context, dir string) error {
	if err := blob.CheckCall(ctx, dir); err != nil {
		return err
	}
	k := s.keys
	n, err := call(ctx, func() (int, error) {
		return deleteTreeScript.Run(ctx, s.client,
			[]string{k.idx, k.writeMark(rand.Text())},
			k.obj, dir, markTTL.Milliseconds()).Int()
	})
	switch {
	case err != nil:
		return s.wrapErr(ctx, "delete tree", dir+"/", nil, err)
	case n == 0:
		return s.wrapErr(ctx, "delete tree", dir+"/", blob.ErrNotExist, nil)
	}
	return nil
}

// call runs f, which sends its commands with ctx, and returns its result,
// or ctx.Err() as soon as ctx is done, whichever comes first. go-redis
// itself notices a cancellation only before a command is sent (and a
// deadline only with ContextTimeoutEnabled), so a stalled server would
// otherwise hold a cancelled call until the client's read timeout. An
// abandoned f finishes in the background, bounded by that timeout, and its
// connection goes back to the pool; a write it carried may or may not
// happen.
func call[T any](ctx context.Context, f func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return f()
	}
	var v T
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		v, err = f()
	}()
	select {
	case <-done:
		return v, err
	case <-ctx.Done():
		select {
		case <-done: // finished meanwhile: its result is the truth
			return v, err
		default:
			var zero T
			return zero, ctx.Err()
		}
	}
}

// condArgs encodes c for the put and delete scripts.
func condArgs(c blob.Cond) (mode, version string) {
	switch {
	case c.IfAbsent:
		return "a", ""
	case c.IfVersion != "":
		return "v", c.IfVersion
	}
	return "", ""
}

// parseInfo builds an Info from the stored version, size and mtime (in
// microseconds), as go-redis returns them.
func parseInfo(key string, version, size, mtime any) (blob.Info, error) {
	v, _ := version.(string)
	sz, _ := size.(string)
	m, _ := mtime.(string)
	n, err1 := strconv.ParseInt(sz, 10, 64)
	us, err2 := strconv.ParseInt(m, 10, 64)
	if v == "" || err1 != nil || err2 != nil {
		return blob.Info{}, fmt.Errorf("malformed metadata (version %q, size %q, mtime %q)", v, sz, m)
	}
	return blob.Info{Key: key, Size: n, Version: v, Modified: time.UnixMicro(us)}, nil
}
