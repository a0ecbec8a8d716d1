package transfer

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// DefaultJobs is how many files Copy, Verify and Import move at a time
// when their options say 0.
const DefaultJobs = 8

// putAttempts bounds how often Copy tries to write one file whose condition
// keeps failing.
const putAttempts = 3

// CopyOptions configures Copy. A nil *CopyOptions is the zero value, which
// copies DefaultJobs files at a time and overwrites nothing.
type CopyOptions struct {
	// Jobs is how many files are copied at a time; 0 means DefaultJobs.
	Jobs int
	// Overwrite replaces a file the destination holds with other content
	// (with Put(IfVersion)); false makes it a Problem of kind ErrDiffers.
	Overwrite bool
	// Progress, when not nil, is called after each file with the counts so
	// far, from several goroutines but one call at a time.
	Progress func(CopyStats)
}

// CopyStats counts what Copy did.
type CopyStats struct {
	Total   int // memory files the source listed
	Copied  int // files written to the destination
	Skipped int // files the destination already held with the same content
	Gone    int // files deleted from the source after the listing
}

// Copy copies every memory file of src (see the package documentation) to
// dst, under the same key, and returns the counts. It does not verify the
// copy; Verify does. Every file is written through a memory.Handler over
// dst (Handler.Write), so dst's rules hold as for the model's commands: its
// file and size limits, its file count, and a name that is never both a
// file and a directory.
//
// A source that holds no memory file is ErrEmptySource, and nothing is
// written. Files that cannot be copied (ErrDiffers, ErrConflict, ErrClash,
// ErrRefused) are returned together as a *ProblemsError once every other
// file is copied;
// any other failure stops the copy, as a *StoreError naming the store it
// came from, with what was copied left in place. Copy does not close
// either store.
func Copy(ctx context.Context, src, dst blob.Store, opts *CopyOptions) (CopyStats, error) {
	if opts == nil {
		opts = &CopyOptions{}
	}
	files, err := memoryFiles(ctx, src)
	if err != nil {
		return CopyStats{}, storeError(Source, err)
	}
	if len(files) == 0 {
		return CopyStats{}, ErrEmptySource
	}
	// The destination is read up to the larger limit: a file the source
	// allows, once copied, is compared (and skipped) on the next run.
	gate, err := newGate(dst)
	if err != nil {
		return CopyStats{}, storeError(Destination, err)
	}
	srcLimit := memory.ReadLimit(src)
	cp := &copier{src: src, dst: dst, gate: gate, srcLimit: srcLimit, dstLimit: max(srcLimit, memory.ReadLimit(dst)),
		overwrite: opts.Overwrite, progress: opts.Progress}
	cp.stats.Total = len(files)
	err = forEach(ctx, jobs(opts.Jobs), files, func(ctx context.Context, f memory.FileInfo) error {
		if f.Size > cp.srcLimit {
			cp.problem(tooLarge(f.Key, "", f.Size, cp.srcLimit, nil))
			return nil
		}
		return cp.copyFile(ctx, f.Key)
	})
	if err != nil {
		return cp.stats, err
	}
	if len(cp.problems) > 0 {
		sortProblems(cp.problems)
		return cp.stats, &ProblemsError{Problems: cp.problems}
	}
	return cp.stats, nil
}

// jobs returns n, or DefaultJobs when n < 1.
func jobs(n int) int {
	if n < 1 {
		return DefaultJobs
	}
	return n
}

// newGate returns the memory.Handler through which the files of s are
// listed and written: the one writer of memory files, which keeps s's
// rules and file count. Its failures come back to the caller as errors, so
// it logs nothing.
func newGate(s blob.Store) (*memory.Handler, error) {
	return memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler)})
}

// memoryFiles lists the memory files of s, in key order, through the
// memory handler's own listing, so that exactly the reserved keys are left
// out. A storage failure comes back as the store's error.
func memoryFiles(ctx context.Context, s blob.Store) ([]memory.FileInfo, error) {
	h, err := newGate(s)
	if err != nil {
		return nil, err
	}
	files, err := h.Files(ctx, "/memories")
	if err != nil {
		if me, ok := errors.AsType[*memory.Error](err); ok && me.Cause != nil {
			err = me.Cause
		}
		return nil, fmt.Errorf("listing: %w", err)
	}
	return files, nil
}

// copier is the state of one Copy.
type copier struct {
	src, dst  blob.Store
	gate      *memory.Handler // over dst: every write goes through it
	srcLimit  int64           // memory.ReadLimit of each
	dstLimit  int64
	overwrite bool
	progress  func(CopyStats)

	mu       sync.Mutex // guards stats, problems and calls to progress
	stats    CopyStats
	problems []Problem
}

// copyFile copies one file; see Copy.
func (cp *copier) copyFile(ctx context.Context, key string) error {
	data, _, err := cp.src.Get(ctx, key, cp.srcLimit)
	if errors.Is(err, blob.ErrNotExist) {
		cp.done(func(s *CopyStats) { s.Gone++ })
		return nil
	}
	if errors.Is(err, blob.ErrTooLarge) {
		cp.problem(tooLarge(key, "", -1, cp.srcLimit, err))
		return nil
	}
	if err != nil {
		return storeError(Source, fmt.Errorf("reading %s: %w", key, err))
	}
	sum := sha256.Sum256(data)
	exists := false // the last write found the name taken
	for range putAttempts {
		old, info, err := cp.dst.Get(ctx, key, cp.dstLimit)
		ifVersion := "" // a create
		switch {
		case errors.Is(err, blob.ErrTooLarge):
			cp.problem(tooLarge(key, "the destination's object ", -1, cp.dstLimit, err))
			return nil
		case err == nil && sha256.Sum256(old) == sum:
			cp.done(func(s *CopyStats) { s.Skipped++ })
			return nil
		case err == nil && !cp.overwrite:
			cp.problem(Problem{Key: key, Reason: "the destination holds other content", Kind: ErrDiffers})
			return nil
		case err == nil:
			ifVersion = info.Version
		case !errors.Is(err, blob.ErrNotExist):
			return storeError(Destination, fmt.Errorf("reading %s: %w", key, err))
		case exists: // taken, yet no file: a directory
			cp.problem(Problem{Key: key, Reason: "the destination has a directory of this name", Kind: ErrClash})
			return nil
		}
		_, err = cp.gate.Write(ctx, memory.PathOf(key), data, ifVersion)
		exists = errors.Is(err, memory.ErrExists)
		refusal, refused := memory.Refusal(err)
		switch {
		case err == nil:
			cp.done(func(s *CopyStats) { s.Copied++ })
			return nil
		case exists, errors.Is(err, memory.ErrConflict): // another writer: read again
		case errors.Is(err, memory.ErrNotDir):
			cp.problem(Problem{Key: key, Reason: "the destination has a file at an ancestor: " + refusal, Kind: ErrClash})
			return nil
		case refused:
			cp.problem(Problem{Key: key, Reason: refusal, Kind: ErrRefused})
			return nil
		default:
			return storeError(Destination, fmt.Errorf("writing %s: %w", key, err))
		}
	}
	cp.problem(Problem{Key: key, Kind: ErrConflict, Reason: fmt.Sprintf(
		"the destination refused the write %d times with a failed condition "+
			"(another writer, or a store that cannot hold both a file and a directory of this name)", putAttempts)})
	return nil
}

// done records one file with update and reports progress.
func (cp *copier) done(update func(*CopyStats)) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	update(&cp.stats)
	if cp.progress != nil {
		cp.progress(cp.stats)
	}
}

func (cp *copier) problem(p Problem) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.problems = append(cp.problems, p)
}

// VerifyOptions configures Verify. A nil *VerifyOptions is the zero value.
type VerifyOptions struct {
	// Jobs is how many files are compared at a time; 0 means DefaultJobs.
	Jobs int
	// Progress, when not nil, is called after each file compared with the
	// number compared and the number to compare, one call at a time.
	Progress func(done, total int)
}

// VerifyStats is what Verify found.
type VerifyStats struct {
	Files int // memory files the source holds
	Extra int // memory files the destination holds that the source does not
}

// Verify lists both stores afresh and checks that every memory file of src
// is in dst with the same SHA-256. Files dst holds beyond src's are counted
// in Extra, not reported. Each difference is a Problem of kind ErrMismatch,
// returned together as a *ProblemsError; any other failure is returned
// as a *StoreError naming the store it came from.
func Verify(ctx context.Context, src, dst blob.Store, opts *VerifyOptions) (VerifyStats, error) {
	if opts == nil {
		opts = &VerifyOptions{}
	}
	srcFiles, err := memoryFiles(ctx, src)
	if err != nil {
		return VerifyStats{}, storeError(Source, err)
	}
	dstFiles, err := memoryFiles(ctx, dst)
	if err != nil {
		return VerifyStats{}, storeError(Destination, err)
	}
	inDst := make(map[string]bool, len(dstFiles))
	for _, f := range dstFiles {
		inDst[f.Key] = true
	}
	stats := VerifyStats{Files: len(srcFiles), Extra: len(dstFiles)}
	var (
		mu       sync.Mutex
		done     int
		common   []string
		problems []Problem
	)
	mismatch := func(key, reason string) Problem { return Problem{Key: key, Reason: reason, Kind: ErrMismatch} }
	srcLimit := memory.ReadLimit(src)
	for _, f := range srcFiles {
		if f.Size > srcLimit { // not copied, not read: one problem, as Copy's
			problems = append(problems, tooLarge(f.Key, "", f.Size, srcLimit, nil))
			if inDst[f.Key] {
				stats.Extra--
			}
			continue
		}
		if inDst[f.Key] {
			common = append(common, f.Key)
			stats.Extra--
		} else {
			problems = append(problems, mismatch(f.Key, "missing from the destination"))
		}
	}
	report := func(p *Problem) {
		mu.Lock()
		defer mu.Unlock()
		if p != nil {
			problems = append(problems, *p)
		}
		done++
		if opts.Progress != nil {
			opts.Progress(done, len(common))
		}
	}
	err = forEach(ctx, jobs(opts.Jobs), common, func(ctx context.Context, key string) error {
		a, err := hashOf(ctx, src, key)
		if errors.Is(err, blob.ErrTooLarge) {
			p := tooLarge(key, "", -1, 0, err)
			report(&p)
			return nil
		}
		if err != nil {
			return storeError(Source, err)
		}
		b, err := hashOfLimit(ctx, dst, key, max(srcLimit, memory.ReadLimit(dst)))
		if errors.Is(err, blob.ErrTooLarge) {
			p := tooLarge(key, "the destination's object ", -1, 0, err)
			report(&p)
			return nil
		}
		if err != nil {
			return storeError(Destination, err)
		}
		var p Problem
		switch {
		case a == nil:
			p = mismatch(key, "deleted from the source while verifying")
		case b == nil:
			p = mismatch(key, "deleted from the destination while verifying")
		case *a != *b:
			p = mismatch(key, fmt.Sprintf("SHA-256 %x in the source, %x in the destination", a[:8], b[:8]))
		default:
			report(nil)
			return nil
		}
		report(&p)
		return nil
	})
	if err != nil {
		return VerifyStats{}, err
	}
	if len(problems) > 0 {
		sortProblems(problems)
		return stats, &ProblemsError{Problems: problems}
	}
	return stats, nil
}

// hashOf returns the SHA-256 of the object at key, or nil when there is
// none.
func hashOf(ctx context.Context, s blob.Store, key string) (*[sha256.Size]byte, error) {
	return hashOfLimit(ctx, s, key, memory.ReadLimit(s))
}

// hashOfLimit is hashOf reading at most limit bytes.
func hashOfLimit(ctx context.Context, s blob.Store, key string, limit int64) (*[sha256.Size]byte, error) {
	data, _, err := s.Get(ctx, key, limit)
	if errors.Is(err, blob.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", key, err)
	}
	sum := sha256.Sum256(data)
	return &sum, nil
}

// forEach calls fn for every item, at most n calls at a time (n >= 1). The
// first error fn returns cancels the context the other calls get, stops
// handing out items, and is returned once every call has ended; so is
// ctx's error when ctx ends first.
func forEach[T any](ctx context.Context, n int, items []T, fn func(context.Context, T) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan T)
	var wg sync.WaitGroup
	for range min(n, len(items)) {
		wg.Go(func() {
			for item := range next {
				if err := fn(ctx, item); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, item := range items {
		select {
		case next <- item:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}
