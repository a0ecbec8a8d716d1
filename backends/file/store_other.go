//go:build !unix

package file

import (
	"errors"
	"fmt"

	"github.com/cloudmem/cloudmem/blob"
)

const dirMode = 0o700

func open(string, *Options) (blob.Store, error) {
	return nil, fmt.Errorf("file: the local-directory store needs a Unix system: %w", errors.ErrUnsupported)
}
