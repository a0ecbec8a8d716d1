package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

// LastChange returns the latest recorded change of key: the version with
// the greatest id (ids follow the writers' clocks) among the records of
// key (its changes, its deletion, a rename to it), with Current unset;
// ok is false when key has no record. Unlike Audit, which reads every
// record of the store, it reads one List of key's own records and one Get
// (one more for each record pruned meanwhile), and writes nothing: a page
// that shows who last changed each of its files costs two calls per file.
func (s *Store) LastChange(ctx context.Context, key string) (v Version, ok bool, err error) {
	if err := check(key); err != nil {
		return Version{}, false, err
	}
	var ids []recordName
	for info, err := range s.inner.List(ctx, Namespace+pathHash(key)+"/") {
		if err != nil {
			return Version{}, false, fmt.Errorf("history: listing the version records: %w", err)
		}
		if n, ok := parseRecordKey(info.Key); ok {
			ids = append(ids, n)
		}
	}
	slices.SortFunc(ids, func(a, b recordName) int { return strings.Compare(b.id, a.id) })
	for _, n := range ids {
		r, err := s.loadRecord(ctx, n.key)
		switch {
		case errors.Is(err, blob.ErrNotExist):
			continue // pruned since the listing
		case err != nil:
			return Version{}, false, fmt.Errorf("history: reading a version record: %w", err)
		case r.Path != key:
			continue // another path whose hash begins alike: not reached with 128 bits
		}
		return r.toVersion(), true, nil
	}
	return Version{}, false, nil
}
