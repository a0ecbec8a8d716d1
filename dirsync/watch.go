package dirsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cloudmem/cloudmem/blob"
)

// Defaults of WatchOptions.
const (
	DefaultInterval    = 30 * time.Second
	DefaultDebounce    = 500 * time.Millisecond
	DefaultDeleteGrace = time.Minute
)

// WatchOptions configures Watch. The zero value of each field is its
// default.
type WatchOptions struct {
	// Interval is how often a pass runs to pull the store's changes even
	// when nothing changed locally. 0 means DefaultInterval.
	Interval time.Duration
	// Debounce is how long the folder must stay quiet after a change
	// before a pass runs. 0 means DefaultDebounce.
	Debounce time.Duration
	// AfterPass, when set, is called after every pass with its report and
	// error (nil, or wrapping ErrConflict, ErrFailed, ...). A pass's error
	// does not stop Watch.
	AfterPass func(Report, error)
}

// Watch syncs dir and store until ctx is done: one pass at once, then a pass
// after every burst of local changes (file-system notifications, debounced)
// and at every Interval. Deletes are held back for opts.DeleteGrace
// (DefaultDeleteGrace when zero) before they propagate.
//
// Watch returns nil when ctx is done, and an error when it cannot watch the
// folder or a pass cannot run at all (another sync holds the state:
// ErrBusy). A pass that fails for some files is reported through AfterPass
// and retried at the next trigger.
func Watch(ctx context.Context, dir string, store blob.Store, opts Options, w WatchOptions) error {
	if w.Interval <= 0 {
		w.Interval = DefaultInterval
	}
	if w.Debounce <= 0 {
		w.Debounce = DefaultDebounce
	}
	if opts.DeleteGrace == 0 {
		opts.DeleteGrace = DefaultDeleteGrace
	}
	if opts.DryRun {
		return errors.New("dirsync: Watch does not take DryRun; run Sync for a dry run")
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("dirsync: watching the folder: %w", err)
	}
	defer fw.Close()
	if err := watchTree(fw, dir); err != nil {
		return fmt.Errorf("dirsync: watching the folder: %w", err)
	}

	pass := func() error {
		rep, err := Sync(ctx, dir, store, opts)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrBusy) {
			return err
		}
		if w.AfterPass != nil {
			w.AfterPass(rep, err)
		}
		return nil
	}
	if err := pass(); err != nil {
		return err
	}
	tick := time.NewTicker(w.Interval)
	defer tick.Stop()
	quiet := time.NewTimer(w.Debounce)
	quiet.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return errors.New("dirsync: the file-system watcher stopped")
			}
			if isTemp(filepath.Base(ev.Name)) {
				continue // our own atomic writes
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					watchTree(fw, ev.Name) // a new directory: watch it too
				}
			}
			quiet.Reset(w.Debounce)
		case err, ok := <-fw.Errors:
			if !ok {
				return errors.New("dirsync: the file-system watcher stopped")
			}
			if w.AfterPass != nil {
				w.AfterPass(Report{}, fmt.Errorf("dirsync: file-system notifications: %w", err))
			}
			quiet.Reset(w.Debounce) // events may have been lost: sync to be sure
		case <-quiet.C:
			if err := pass(); err != nil {
				return err
			}
		case <-tick.C:
			if err := pass(); err != nil {
				return err
			}
		}
	}
}

// watchTree adds dir and every directory below it (not following links) to
// the watcher.
func watchTree(fw *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && strings.HasPrefix(d.Name(), tempPrefix) {
			return fs.SkipDir
		}
		return fw.Add(p)
	})
}
