package dirsync

import (
	"context"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

// Hooks for the external tests.

// WithClock returns opts with the pass's clock replaced.
func WithClock(opts Options, now func() time.Time) Options {
	opts.now = now
	return opts
}

// LockState takes the state's lock as a running pass does.
var LockState = lockState

// SyncWithLocalFault runs a pass whose every change to the folder first
// asks fail, which may fail it (a crash) or act meanwhile (a user's edit).
func SyncWithLocalFault(ctx context.Context, dir string, store blob.Store, opts Options, fail func(op, key string) error) (Report, error) {
	p, err := newPass(dir, store, opts)
	if err != nil {
		return Report{}, err
	}
	defer p.close()
	p.local.fail = fail
	return p.run(ctx)
}
