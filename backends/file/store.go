package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// Options configures a store. The zero value is ready to use.
type Options struct {
	// NoSync skips the fsync calls after each write. Writes stay atomic
	// for readers, but a power failure may lose recent writes or leave
	// objects empty. Meant for scratch directories and tests. False means
	// every successful write is on disk when it returns.
	NoSync bool

	// Timeout is the deadline of each call (see blob.WithTimeout), which
	// bounds the wait for the store's lock; a system call the kernel does
	// not interrupt (a hung network file system) is not cut short. Zero
	// means blob.DefaultTimeout (30s). The URL parameter timeout= sets it.
	Timeout time.Duration

	// CreateOnWrite leaves a missing directory missing until the first
	// write, which creates it: until then the store reads as an empty
	// store and touches nothing, so a command that only reads (or whose
	// writes are refused) leaves no directory behind; its lock (Locker)
	// then excludes the callers in this process only. False means Open
	// creates a missing directory. A store URL opens with it set.
	CreateOnWrite bool
}

// Open returns a store over the directory dir, creating it with mode 0700
// (and any missing parents) if it is missing, or, with
// opts.CreateOnWrite, at the first write. dir may be relative; the store
// records its absolute path, so later changes of the working directory do
// not affect it. A nil opts means the zero Options. Open fails when dir
// exists but is not a directory; ctx bounds the checks Open makes.
func Open(ctx context.Context, dir string, opts *Options) (blob.Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, errors.New("file: empty directory name")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if opts == nil {
		opts = &Options{}
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) && opts.CreateOnWrite {
		now := *opts
		now.CreateOnWrite = false
		return &lazyStore{dir: abs, open: func(ctx context.Context) (blob.Store, error) {
			return Open(ctx, abs, &now)
		}}, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(abs, dirMode); err != nil {
			return nil, fmt.Errorf("file: %w", err)
		}
		if err := os.Chmod(abs, dirMode); err != nil { // exactly 0700, whatever the umask
			return nil, fmt.Errorf("file: %w", err)
		}
		fi, err = os.Stat(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("file: %s is not a directory", abs)
	}
	return open(abs, opts)
}
