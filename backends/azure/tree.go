package azure

import (
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
)

var _ blob.TreeDeleter = (*store)(nil)

// DeleteTree implements blob.TreeDeleter: it lists the objects under dir
// and deletes them, up to blob.DeleteParallel at once, through
// blob.DeleteKeys. It does not use Azure's blob batch API: Azurite, the
// emulator this store is tested on, answers batch deletes with errors
// (Azure/Azurite issue 2509, open), so a batch path could not be tested.
// Each object costs one delete request, but they overlap. An object
// deleted by someone else meanwhile is no error.
func (s *store) DeleteTree(ctx context.Context, dir string) error {
	if _, err := s.blobName(ctx, dir); err != nil {
		return err
	}
	infos, err := blob.ListAll(ctx, s, dir+"/")
	if err != nil {
		return err
	}
	if len(infos) == 0 {
		return fmt.Errorf("azure: %q: %w", dir+"/", blob.ErrNotExist)
	}
	keys := make([]string, len(infos))
	for i, info := range infos {
		keys[i] = info.Key
	}
	return blob.DeleteKeys(ctx, s, keys)
}
