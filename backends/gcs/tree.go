package gcs

import (
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
)

var _ blob.TreeDeleter = (*store)(nil)

// DeleteTree implements blob.TreeDeleter: it lists the objects under dir
// and deletes them, up to blob.DeleteParallel at once, through
// blob.DeleteKeys. GCS's Go client has no batch API, so each object costs
// one delete request, but they overlap. An object
// deleted by someone else meanwhile is no error.
func (s *store) DeleteTree(ctx context.Context, dir string) error {
	if _, err := s.object(ctx, dir); err != nil {
		return err
	}
	infos, err := blob.ListAll(ctx, s, dir+"/")
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		return fmt.Errorf("gcs: %q: %w", dir+"/", blob.ErrNotExist)
	}
	keys := make([]string, len(infos))
	for i, info := range infos {
		keys[i] = info.Key
	}
	return blob.DeleteKeys(ctx, s, keys)
}
