package history

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
)

// Rename answers errors.ErrUnsupported, so that blob.Rename moves a tree
// through the store's Puts and Deletes, each recorded, and a move
// interrupted midway completes when it is sent again.
func (s *Store) Rename(ctx context.Context, src, dst string) error {
	return fmt.Errorf("history: an atomic rename would record nothing: %w", errors.ErrUnsupported)
}

// DeleteTree deletes every key under the directory dir, each with its own
// "deleted" record, with the semantics and errors of blob.Tree. It
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
