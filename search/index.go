// Package search keeps a full-text index over a memory tree, so that a model
// (or a person) can find what the memory holds without viewing directory
// after directory: Index.Search ranks the files by BM25 and returns, for
// each hit, its path, the lines that match and a snippet of the best line
// with the matches marked, ready for a view with view_range.
//
// # Queries
//
// A query is words (docs/spec.md "Search" gives the texts): a file matches
// when it holds any of them, and ranks higher when it holds more of them,
// rarer ones, more often, in fewer words (BM25, k1 = 1.2, b = 0.75). A word
// in double quotes, or several ("deploy key"), is a phrase: its words must
// follow each other. A word ending in * matches every word that starts with
// it. Words are runs of letters, digits and combining marks, compared after
// NFKC and lower case; each letter of a script written without spaces (Han,
// Kana, Thai, ...) is a word of its own, so "東京" is a phrase of two.
//
// # A cache of the store
//
// The index is a cache that can always be rebuilt: the first Search (or
// Refresh) lists the store once and reads every file once, with blob.Get
// bounded by Options.MaxFileBytes. Reserved keys (blob.IsReserved) and
// hidden names (a segment starting with "." or named node_modules, which
// the memory tool's listings hide too) are never read or found; nor are
// files over the limit or not UTF-8 (images). It lives in memory: nothing
// reaches disk, so the index of an encrypted store (package crypt) is as
// safe as the process. For a plain store, Options.CacheFile also keeps
// what the index read in a local file, so that the next process reads only
// what changed since (see Options.CacheFile); it is refused on an
// encrypted store (blob.Traits.Encrypted).
//
// It is kept current two ways:
//
//   - Writes made through a memory.Handler of this process: give the
//     Handler Index.Observer as its Options.Observer. Each writing command
//     marks its paths changed before the Handler returns its result, and
//     the next Search re-reads only those (one Get per path; for a path
//     that is no longer a file, one List of the directory beneath it). So
//     every acknowledged write is found by the next Search.
//   - Writes of other processes, or made around the Handler: a Search
//     whose last refresh is older than Options.MaxAge refreshes, and so
//     does Refresh: one List of the store, then a Get of each file whose
//     version changed, and the files gone are dropped.
//   - Files that expire (a write policy's expiry rules, blob.WithExpiry):
//     the reads note when the first file read expires
//     (blob.ExpiryWatch), and the first Search from then on refreshes, so
//     an expired file is not found from the instant it expires.
//
// Why an Observer rather than a blob.Store wrapper that notes Put, Delete
// and Rename: a wrapper must forward every capability of the store it wraps
// (Tree, Locker, Copier, BatchDeleter, the Traits), and one it forgets silently changes the Handler's
// behaviour; the Observer changes nothing beneath the Handler, sees the
// memory paths (not the keys of a prefixed or mounted store), and costs
// one Get per changed path on the next query. Writes that do not go
// through a Handler are what the refresh is for, as for another process.
//
// An Index is safe for concurrent use: queries run in parallel, and the
// reads that bring the index up to date are made by one query at a time,
// the others waiting for it.
package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Defaults of Options and Request.
const (
	DefaultMaxAge   = 5 * time.Second
	DefaultParallel = 8
	DefaultLimit    = 10
	MaxLimit        = 100
)

// Options configures an Index. The zero value gives the defaults.
type Options struct {
	// MaxFileBytes bounds each read; a larger file is not indexed. 0 means
	// the store's limit (blob.Limits: a URL's max_file_bytes; on a mount
	// table the largest of the mounts'), else memory.DefaultMaxFileBytes.
	// Set it to the Handler's MaxFileBytes when that is set.
	MaxFileBytes int64
	// MaxAge is how old the last refresh from the store may be for a
	// Search to answer without listing the store again. 0 means
	// DefaultMaxAge; negative means every Search refreshes first.
	MaxAge time.Duration
	// Parallel is how many files are read at once. 0 means
	// DefaultParallel.
	Parallel int
	// CacheFile, when set, is a local file in which the index keeps what
	// it read (each file's key, version, size, modification time and
	// text), so that an index made later, in this process or another,
	// reads from the store only what changed: the first refresh lists the
	// store, and reads a file only when its version, size or modification
	// time differ from the cache's. The postings are computed again from
	// the texts, which costs CPU but no storage call. The file is written
	// with mode 0600 and replaced whole (a temporary file renamed) after a
	// refresh that changed what the index holds; a file that cannot be
	// read or decoded is ignored. Give each store its own file. It is
	// refused on an encrypted store (ErrEncryptedCache): the file would
	// hold the plain text.
	CacheFile string
}

// ErrEncryptedCache is the error of Open, and of every Search and Refresh
// of an index made by New, when Options.CacheFile is set on an encrypted
// store (docs/spec.md "Search").
var ErrEncryptedCache = errors.New("search: an index file is refused on an encrypted store: the index holds the files' plain text")

// Index is a full-text index over the memory files of one store. It is safe
// for concurrent use.
type Index struct {
	store    blob.Store
	limit    int64
	maxAge   time.Duration
	parallel int

	syncMu    sync.Mutex           // one refresh or re-read at a time
	built     bool                 // under syncMu: a refresh succeeded
	refreshed time.Time            // under syncMu: when the last one began
	expiry    *blob.ExpiryWatch    // under syncMu: when the first file read since the last refresh expires
	seen      map[string]blob.Info // under syncMu: key -> what was read of every file looked at, indexed or not

	cacheFile string               // Options.CacheFile
	cacheErr  error                // ErrEncryptedCache, or nil
	loaded    bool                 // under syncMu: the cache file was tried
	cached    map[string]blob.Info // under syncMu: files taken from the cache file and not yet checked against a listing
	unsaved   bool                 // under syncMu: the index changed since the cache file was written
	saveErr   error                // under syncMu: the last save's error

	dirtyMu sync.Mutex
	dirty   map[string]struct{} // keys written by this process since they were read
	stale   bool                // the whole store changed (a write at the root)

	mu sync.RWMutex
	p  *postings
}

// New returns an Index over store; it reads nothing until the first Search
// or Refresh. store should be the store the Handler uses (prefixed,
// mounted, decrypted), since the index shows its keys as memory paths.
// With Options.CacheFile set on an encrypted store, every Search and
// Refresh of the index returns ErrEncryptedCache; Open says so at once.
func New(store blob.Store, opts *Options) *Index {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = memory.FileBytesLimit(store)
	}
	if o.MaxAge == 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	x := &Index{store: store, limit: o.MaxFileBytes, maxAge: o.MaxAge, parallel: o.Parallel,
		seen: map[string]blob.Info{}, dirty: map[string]struct{}{}, p: newPostings(), cacheFile: o.CacheFile}
	if o.CacheFile != "" && blob.TraitsOf(store).Encrypted {
		x.cacheErr = ErrEncryptedCache
	}
	return x
}

// Open is New, returning ErrEncryptedCache (and no Index) when
// Options.CacheFile is set on an encrypted store. It reads nothing.
func Open(store blob.Store, opts *Options) (*Index, error) {
	x := New(store, opts)
	if x.cacheErr != nil {
		return nil, x.cacheErr
	}
	return x, nil
}

// Changed tells the index that the files at these keys (or the trees
// beneath them) were written, so that the next Search reads them again. The
// empty key means the whole store. Program that write the store around a
// memory.Handler call it, or Refresh.
func (x *Index) Changed(keys ...string) {
	x.dirtyMu.Lock()
	defer x.dirtyMu.Unlock()
	for _, k := range keys {
		if k == "" {
			x.stale = true
			continue
		}
		x.dirty[k] = struct{}{}
	}
}

// Refresh brings the index up to date with the store: one List, and a Get
// of each file that changed since it was read. On error the index keeps
// what it had, and the next Search tries again. With Options.CacheFile,
// it also returns the error of writing that file (a Search does not: its
// index is current all the same).
func (x *Index) Refresh(ctx context.Context) error {
	if x.cacheErr != nil {
		return x.cacheErr
	}
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	dirty, stale := x.takeDirty()
	if err := x.refresh(ctx, ""); err != nil {
		x.Changed(dirty...)
		if stale {
			x.Changed("")
		}
		return err
	}
	return x.saveErr
}

// CacheFileError returns the error of the last write of Options.CacheFile
// (wrapping ErrCacheWrite), or nil when it succeeded or none was made. A
// Search does not return it, its results being current all the same; a
// program that wants it said asks here after the Search.
func (x *Index) CacheFileError() error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	return x.saveErr
}

// Files returns the number of files the index holds.
func (x *Index) Files() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.p.live()
}

// sync brings the index up to date for a Search: a refresh when none was
// made or the last is older than MaxAge, else a re-read of the keys this
// process changed.
func (x *Index) sync(ctx context.Context) error {
	if x.cacheErr != nil {
		return x.cacheErr
	}
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	dirty, stale := x.takeDirty()
	var err error
	if !x.built || stale || x.maxAge < 0 || time.Since(x.refreshed) >= x.maxAge || x.expiry.Due() {
		err = x.refresh(ctx, "")
	} else {
		err = x.reread(ctx, dirty)
	}
	if err != nil {
		x.Changed(dirty...)
		if stale {
			x.Changed("")
		}
	}
	return err
}

func (x *Index) takeDirty() ([]string, bool) {
	x.dirtyMu.Lock()
	defer x.dirtyMu.Unlock()
	keys := make([]string, 0, len(x.dirty))
	for k := range x.dirty {
		keys = append(keys, k)
	}
	clear(x.dirty)
	stale := x.stale
	x.stale = false
	return keys, stale
}

// indexable reports whether a key can be found: not reserved, not hidden.
func indexable(key string) bool {
	for seg := range strings.SplitSeq(key, "/") {
		if strings.HasPrefix(seg, ".") || seg == "node_modules" {
			return false // also every reserved segment (".cloudmem...")
		}
	}
	return !blob.IsReserved(key)
}

// refresh lists the keys under prefix ("" for the whole store), reads those
// whose version changed and drops those gone. Called under syncMu.
func (x *Index) refresh(ctx context.Context, prefix string) error {
	start := time.Now()
	if x.cacheFile != "" && !x.loaded {
		x.load()
	}
	// A file that expires (blob.WithExpiry) is gone from the instant it
	// does: the reads note when the first of them expires, and the
	// Search after that refreshes.
	watch := x.expiry
	if prefix == "" || watch == nil {
		watch = &blob.ExpiryWatch{}
	}
	ctx = watch.Watch(ctx)
	listed := map[string]struct{}{}
	var read []blob.Info
	for info, err := range x.store.List(ctx, prefix) {
		if err != nil {
			return fmt.Errorf("search: listing the store: %w", err)
		}
		if !indexable(info.Key) {
			continue
		}
		listed[info.Key] = struct{}{}
		if v, ok := x.seen[info.Key]; ok && v.Version == info.Version {
			continue
		}
		if info.Size > x.limit { // not read: it would be refused
			x.seen[info.Key] = info
			x.drop(info.Key)
			x.unsaved = true
			continue
		}
		if c, ok := x.cached[info.Key]; ok && sameFile(c, info) { // indexed from the cache file
			x.seen[info.Key] = info
			continue
		}
		read = append(read, info)
	}
	for key := range x.seen {
		if _, ok := listed[key]; !ok && strings.HasPrefix(key, prefix) {
			delete(x.seen, key)
			x.drop(key)
			x.unsaved = true
		}
	}
	if err := x.readAll(ctx, read); err != nil {
		return err
	}
	x.expiry = watch
	if prefix == "" {
		x.built, x.refreshed = true, start
		x.forgetCached()
		if x.cacheFile != "" && x.unsaved {
			x.saveErr = x.save()
			x.unsaved = x.saveErr != nil
		}
	}
	return nil
}

// reread reads the keys this process changed again. Called under syncMu.
func (x *Index) reread(ctx context.Context, keys []string) error {
	infos := make([]blob.Info, 0, len(keys))
	for _, k := range keys {
		if indexable(k) {
			infos = append(infos, blob.Info{Key: k})
		} else if !blob.IsReserved(k) && k != "" {
			// a hidden name: nothing beneath it is indexed either
			x.dropTree(k)
			x.unsaved = true
		}
	}
	if x.expiry != nil {
		ctx = x.expiry.Watch(ctx)
	}
	gone, err := x.readEach(ctx, infos)
	if err != nil {
		return err
	}
	for _, k := range gone { // no longer a file: maybe a directory
		if err := x.refresh(ctx, k+"/"); err != nil {
			return err
		}
	}
	return nil
}

// readAll reads and indexes the files listed, the missing ones dropped.
func (x *Index) readAll(ctx context.Context, infos []blob.Info) error {
	_, err := x.readEach(ctx, infos)
	return err
}

// readEach reads the files of infos, Parallel at once, and indexes them. An
// Info with a Version records that version (the listing's spelling), else
// the one Get reports. It returns the keys that do not exist.
func (x *Index) readEach(ctx context.Context, infos []blob.Info) (gone []string, err error) {
	if len(infos) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan blob.Info)
	var (
		wg      sync.WaitGroup
		outMu   sync.Mutex
		first   error
		seenSet = map[string]blob.Info{}
		files   []parsed // read and analysed, put together at the end
	)
	for range min(x.parallel, len(infos)) {
		wg.Go(func() {
			for info := range work {
				data, got, err := x.store.Get(ctx, info.Key, x.limit)
				if info.Version == "" { // not listed: what Get says
					got.Key = info.Key
					info = got
				}
				version := info.Version
				outMu.Lock()
				switch {
				case err == nil:
					seenSet[info.Key] = info
				case errors.Is(err, blob.ErrNotExist):
					gone = append(gone, info.Key)
				case errors.Is(err, blob.ErrTooLarge):
					seenSet[info.Key] = info
				default:
					if first == nil {
						first = fmt.Errorf("search: reading a file: %w", err)
						cancel()
					}
				}
				outMu.Unlock()
				isText := err == nil && utf8.Valid(data)
				if errors.Is(err, blob.ErrTooLarge) || err == nil && !isText {
					x.drop(info.Key) // not indexed (an image, say): what it held goes
				}
				if !isText {
					continue
				}
				f := parsed{key: info.Key, version: version, text: string(data)}
				f.a = analyse(f.text, x.p.dict)
				outMu.Lock()
				files = append(files, f)
				outMu.Unlock()
			}
		})
	}
feed:
	for _, info := range infos {
		select {
		case work <- info:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	x.mu.Lock()
	x.p.putAll(files)
	x.mu.Unlock()
	x.unsaved = true
	for k, v := range seenSet {
		x.seen[k] = v
	}
	for _, k := range gone {
		delete(x.seen, k)
		x.drop(k)
	}
	x.p.dict.settle()
	x.mu.Lock()
	x.p = x.p.compacted()
	x.mu.Unlock()
	if first == nil && ctx.Err() != nil {
		first = fmt.Errorf("search: reading the files: %w", ctx.Err())
	}
	return gone, first
}

// drop removes key from the index.
func (x *Index) drop(key string) {
	x.mu.Lock()
	x.p.remove(key)
	x.mu.Unlock()
}

// dropTree removes key and every key beneath it. Called under syncMu.
func (x *Index) dropTree(key string) {
	for k := range x.seen {
		if k == key || strings.HasPrefix(k, key+"/") {
			delete(x.seen, k)
			x.drop(k)
		}
	}
}
