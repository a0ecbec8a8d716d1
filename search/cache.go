package search

import (
	"bufio"
	"cmp"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/blob"
)

// ErrCacheWrite wraps the failure to write Options.CacheFile, which
// Refresh returns after bringing the index up to date, and
// Index.CacheFileError after a Search (the index is current all the same;
// only the next process will read more). The text
// is "search: writing the index file FILE: CAUSE".
var ErrCacheWrite = errors.New("search: writing the index file")

// writeError is err of writing the cache file, naming the file the caller
// gave rather than the temporary one beside it.
func (x *Index) writeError(err error) error {
	if pe, ok := errors.AsType[*os.PathError](err); ok {
		err = pe.Err
	}
	return fmt.Errorf("%w %s: %w", ErrCacheWrite, x.cacheFile, err)
}

// cacheFormat is the version of the cache file's layout; a file of
// another is ignored.
const cacheFormat = 1

// cacheData is the content of a cache file (Options.CacheFile), in gob.
type cacheData struct {
	Format int
	Files  []cachedFile
}

// cachedFile is one file the index looked at: what the store said of it
// and, if it is indexed, its text.
type cachedFile struct {
	Key      string
	Version  string
	Size     int64
	Modified time.Time
	Indexed  bool // false: over the limit or not UTF-8, so not indexed
	Text     string
}

// sameFile reports whether the listing's info is the file the cache file
// holds: same version, size and modification time. The three together
// tell a file of another store, or of this store emptied and written
// again (a version counter starts anew), from the one the cache holds.
func sameFile(cached, listed blob.Info) bool {
	return cached.Version == listed.Version && cached.Size == listed.Size && cached.Modified.Equal(listed.Modified)
}

// load indexes the files of the cache file and notes them in x.cached, for
// the refresh that follows to check against its listing. A file that
// cannot be read or decoded, or of another format, is ignored: the index
// is then built from the store. Called under syncMu, once.
func (x *Index) load() {
	x.loaded = true
	f, err := os.Open(x.cacheFile)
	if err != nil {
		return
	}
	defer f.Close()
	var data cacheData
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&data); err != nil || data.Format != cacheFormat {
		return
	}
	x.cached = make(map[string]blob.Info, len(data.Files))
	var files []parsed
	for _, c := range data.Files {
		if !indexable(c.Key) || c.Indexed && (!utf8.ValidString(c.Text) || int64(len(c.Text)) > x.limit || int64(len(c.Text)) != c.Size) {
			continue // not what this index would hold: read it again
		}
		if c.Indexed {
			files = append(files, parsed{c.Key, c.Version, c.Text, analyse(c.Text, x.p.dict)})
		}
		x.cached[c.Key] = blob.Info{Key: c.Key, Version: c.Version, Size: c.Size, Modified: c.Modified}
	}
	x.mu.Lock()
	x.p.putAll(files)
	x.mu.Unlock()
	x.p.dict.settle()
}

// forgetCached drops the files taken from the cache file that the last
// listing did not confirm (gone from the store, or read again and so in
// x.seen with their new text). Called under syncMu after a whole refresh.
func (x *Index) forgetCached() {
	for k := range x.cached {
		if _, ok := x.seen[k]; !ok {
			x.drop(k)
			x.unsaved = true
		}
	}
	x.cached = nil
}

// save writes the cache file: what x.seen holds, with the text of each
// indexed file, to a temporary file of mode 0600 beside it, synced, then
// renamed over it. Called under syncMu.
func (x *Index) save() (err error) {
	if blob.TraitsOf(x.store).Encrypted { // checked by New too; a store may learn it late
		return ErrEncryptedCache
	}
	data := cacheData{Format: cacheFormat, Files: make([]cachedFile, 0, len(x.seen))}
	x.mu.RLock()
	for k, info := range x.seen {
		c := cachedFile{Key: k, Version: info.Version, Size: info.Size, Modified: info.Modified}
		if id, ok := x.p.byKey[k]; ok {
			c.Indexed, c.Text = true, x.p.docs[id].text
		}
		data.Files = append(data.Files, c)
	}
	x.mu.RUnlock()
	slices.SortFunc(data.Files, func(a, b cachedFile) int { return cmp.Compare(a.Key, b.Key) })

	dir, base := filepath.Split(x.cacheFile)
	tmp, err := os.CreateTemp(dir, "."+base+".*.tmp") // mode 0600
	if err != nil {
		return x.writeError(err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<16)
	if err := gob.NewEncoder(w).Encode(&data); err != nil {
		return x.writeError(err)
	}
	if err := errors.Join(w.Flush(), tmp.Chmod(0o600), tmp.Sync()); err != nil {
		return x.writeError(err)
	}
	if err := tmp.Close(); err != nil {
		return x.writeError(err)
	}
	if err := os.Rename(tmp.Name(), x.cacheFile); err != nil {
		return x.writeError(err)
	}
	return nil
}
