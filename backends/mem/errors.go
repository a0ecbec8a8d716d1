package mem

import (
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
)

// notExist and precondition are the store's errors, naming the key.
func notExist(key string) error { return fmt.Errorf("mem: %q: %w", key, blob.ErrNotExist) }

func precondition(key string) error { return fmt.Errorf("mem: %q: %w", key, blob.ErrPrecondition) }
