package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// defaultJobs is how many files copy and import move at a time.
const defaultJobs = 8

// putAttempts bounds how often copy tries to write one file whose
// condition keeps failing (another writer, or a store that refuses the
// name).
const putAttempts = 3

// runCopy implements "cloudmem copy SRC_URL DST_URL": it copies every file
// of one store to another, then verifies the copy. See copyStore and
// verifyCopy.
func runCopy(c *cli, args []string) int {
	fs := flag.NewFlagSet("cloudmem copy", flag.ContinueOnError)
	jobs := fs.Int("jobs", defaultJobs, "copy `N` files at a time")
	overwrite := fs.Bool("overwrite", false, "replace files DST holds with other content")
	usage := plainUsage("copy SRC_URL DST_URL [--jobs N] [--overwrite]",
		"Copies every file of the store SRC_URL to the store DST_URL (any two store URLs: a directory\n"+
			"to a bucket, a plain store into an encrypted one), then reads both back and compares the\n"+
			"SHA-256 of every file. A file DST already holds with the same content is skipped, so an\n"+
			"interrupted copy can be run again; one with other content is an error unless --overwrite.\n"+
			"Each store's own bookkeeping (.cloudmem/, such as an encryption key) is not copied.\n"+
			"Exit status 1 when a file could not be copied or the verification finds a difference.")
	pos, code, done := c.parseArgs(fs, args, usage, "SRC_URL", "DST_URL")
	if done {
		return code
	}
	if *jobs < 1 {
		return c.usageError(fs, usage, fmt.Errorf("--jobs %d: want 1 or more", *jobs))
	}
	src, err := storeurl.Open(c.ctx, pos[0])
	if err != nil {
		return c.fail("copy", fmt.Errorf("SRC: %w", err))
	}
	defer blob.Close(src)
	dst, err := storeurl.Open(c.ctx, pos[1])
	if err != nil {
		return c.fail("copy", fmt.Errorf("DST: %w", err))
	}
	defer blob.Close(dst)

	p := c.progress()
	showCopy := func(final bool, s copyStats) {
		p.show(final, "copy: %d/%d files (%d copied, %d skipped)", s.copied+s.skipped+s.gone, s.total, s.copied, s.skipped)
	}
	stats, problems, err := copyStore(c.ctx, src, dst, copyOptions{jobs: *jobs, overwrite: *overwrite},
		func(s copyStats) { showCopy(false, s) })
	showCopy(true, stats)
	p.end()
	if err != nil {
		return c.fail("copy", fmt.Errorf("%w (%s copied; run copy again to finish)", err, plural(stats.copied, "file")))
	}
	if len(problems) > 0 {
		return c.reportProblems("copy", problems,
			fmt.Sprintf("%d of %d files were not copied (%d copied, %d skipped)", len(problems), stats.total, stats.copied, stats.skipped))
	}
	fmt.Fprintf(c.stdout, "copied %s, skipped %d that DST already held\n", plural(stats.copied, "file"), stats.skipped)

	v, err := verifyCopy(c.ctx, src, dst, *jobs, func(done, total int) {
		p.show(done == total, "verify: %d/%d files", done, total)
	})
	p.end()
	if err != nil {
		return c.fail("copy", fmt.Errorf("verify: %w", err))
	}
	if len(v.problems) > 0 {
		return c.reportProblems("copy", v.problems,
			fmt.Sprintf("verification failed: %d of %d files differ", len(v.problems), v.files))
	}
	fmt.Fprintf(c.stdout, "verified %s: every SHA-256 is equal", plural(v.files, "file"))
	if v.extra > 0 {
		fmt.Fprintf(c.stdout, " (DST also holds %s that SRC does not)", plural(v.extra, "file"))
	}
	fmt.Fprintln(c.stdout)
	return exitOK
}

// plainUsage is subcommandUsage for a command that does not use --store.
func plainUsage(synopsis, about string) func(io.Writer, *flag.FlagSet) {
	return func(w io.Writer, fs *flag.FlagSet) {
		fmt.Fprintf(w, "Usage: cloudmem %s\n\n%s\n\nFlags:\n", synopsis, about)
		printDefaults(w, fs)
	}
}

// copyOptions configures copyStore.
type copyOptions struct {
	jobs      int  // files copied at a time; at least 1
	overwrite bool // replace a file DST holds with other content
}

// copyStats counts what copyStore did.
type copyStats struct {
	total   int // files SRC listed
	copied  int // files written to DST
	skipped int // files DST already held with the same content
	gone    int // files deleted from SRC after the listing
}

// copyStore copies every file of src (bookkeeping under .cloudmem/ left
// out) to dst, jobs at a time. A file dst already holds with the same
// SHA-256 is skipped, so a second run after an interruption finishes the
// job. A missing file is written with Put(IfAbsent); a file dst holds with
// other content is a problem, or with overwrite is replaced with
// Put(IfVersion), so that a concurrent writer is never overwritten
// unseen: when the condition fails, copyStore looks again (putAttempts
// times in all).
//
// Files that cannot be copied for those reasons are returned as problems,
// one line each, sorted, after every other file was copied. Any other
// failure (a store, ctx) stops the copy and is returned as err; what was
// copied stays copied. progress, when not nil, is called (from several
// goroutines, one call at a time) after each file.
func copyStore(ctx context.Context, src, dst blob.Store, opts copyOptions, progress func(copyStats)) (copyStats, []string, error) {
	infos, err := memoryFiles(ctx, src)
	if err != nil {
		return copyStats{}, nil, fmt.Errorf("SRC: %w", err)
	}
	cp := &copier{src: src, dst: dst, overwrite: opts.overwrite, progress: progress}
	cp.stats.total = len(infos)
	err = forEach(ctx, opts.jobs, infos, func(ctx context.Context, info blob.Info) error {
		return cp.copyFile(ctx, info.Key)
	})
	slices.Sort(cp.problems)
	return cp.stats, cp.problems, err
}

// copier is the state of one copyStore.
type copier struct {
	src, dst  blob.Store
	overwrite bool
	progress  func(copyStats)

	mu       sync.Mutex // guards stats, problems and calls to progress
	stats    copyStats
	problems []string
}

// copyFile copies one file; see copyStore.
func (cp *copier) copyFile(ctx context.Context, key string) error {
	data, _, err := cp.src.Get(ctx, key, blob.MaxObjectBytes)
	if errors.Is(err, blob.ErrNotExist) {
		cp.done(func(s *copyStats) { s.gone++ })
		return nil
	}
	if err != nil {
		return fmt.Errorf("SRC: reading %s: %w", key, err)
	}
	sum := sha256.Sum256(data)
	for range putAttempts {
		old, info, err := cp.dst.Get(ctx, key, blob.MaxObjectBytes)
		cond := blob.Cond{IfAbsent: true}
		switch {
		case err == nil && sha256.Sum256(old) == sum:
			cp.done(func(s *copyStats) { s.skipped++ })
			return nil
		case err == nil && !cp.overwrite:
			cp.problem(key + ": DST holds other content (--overwrite replaces it)")
			return nil
		case err == nil:
			cond = blob.Cond{IfVersion: info.Version}
		case !errors.Is(err, blob.ErrNotExist):
			return fmt.Errorf("DST: reading %s: %w", key, err)
		}
		_, err = cp.dst.Put(ctx, key, data, cond)
		if err == nil {
			cp.done(func(s *copyStats) { s.copied++ })
			return nil
		}
		if !errors.Is(err, blob.ErrPrecondition) {
			return fmt.Errorf("DST: writing %s: %w", key, err)
		}
	}
	cp.problem(fmt.Sprintf("%s: DST refused the write %d times with a failed condition "+
		"(another writer, or a store that cannot hold both a file and a directory of this name)", key, putAttempts))
	return nil
}

// done records one file with update and reports progress.
func (cp *copier) done(update func(*copyStats)) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	update(&cp.stats)
	if cp.progress != nil {
		cp.progress(cp.stats)
	}
}

func (cp *copier) problem(p string) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.problems = append(cp.problems, p)
}

// verifyResult is what verifyCopy found.
type verifyResult struct {
	files    int      // files SRC holds
	extra    int      // files DST holds that SRC does not
	problems []string // one line per file that differs, sorted
}

// verifyCopy lists both stores afresh and checks that every file of src is
// in dst with the same SHA-256, reading jobs files at a time. Files dst
// holds beyond src's are counted, not reported as problems. progress, when
// not nil, is called (one call at a time) after each file compared.
func verifyCopy(ctx context.Context, src, dst blob.Store, jobs int, progress func(done, total int)) (verifyResult, error) {
	srcFiles, err := memoryFiles(ctx, src)
	if err != nil {
		return verifyResult{}, fmt.Errorf("SRC: %w", err)
	}
	dstFiles, err := memoryFiles(ctx, dst)
	if err != nil {
		return verifyResult{}, fmt.Errorf("DST: %w", err)
	}
	inDst := make(map[string]bool, len(dstFiles))
	for _, info := range dstFiles {
		inDst[info.Key] = true
	}
	res := verifyResult{files: len(srcFiles), extra: len(dstFiles)}
	var (
		mu     sync.Mutex
		done   int
		common []string
	)
	for _, info := range srcFiles {
		if inDst[info.Key] {
			common = append(common, info.Key)
			res.extra--
		} else {
			res.problems = append(res.problems, info.Key+": missing from DST")
		}
	}
	report := func(problem string) {
		mu.Lock()
		defer mu.Unlock()
		if problem != "" {
			res.problems = append(res.problems, problem)
		}
		done++
		if progress != nil {
			progress(done, len(common))
		}
	}
	err = forEach(ctx, jobs, common, func(ctx context.Context, key string) error {
		a, err := hashOf(ctx, src, key)
		if err != nil {
			return fmt.Errorf("SRC: %w", err)
		}
		b, err := hashOf(ctx, dst, key)
		if err != nil {
			return fmt.Errorf("DST: %w", err)
		}
		switch {
		case a == nil:
			report(key + ": deleted from SRC while verifying")
		case b == nil:
			report(key + ": deleted from DST while verifying")
		case *a != *b:
			report(fmt.Sprintf("%s: SHA-256 %x in SRC, %x in DST", key, a[:8], b[:8]))
		default:
			report("")
		}
		return nil
	})
	if err != nil {
		return verifyResult{}, err
	}
	slices.Sort(res.problems)
	return res, nil
}

// hashOf returns the SHA-256 of the object at key, or nil when there is
// none.
func hashOf(ctx context.Context, s blob.Store, key string) (*[sha256.Size]byte, error) {
	data, _, err := s.Get(ctx, key, blob.MaxObjectBytes)
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

// progressLine shows one line of progress that rewrites itself ("\r"), on
// a terminal only: a zero progressLine shows nothing. It is safe for
// concurrent use.
type progressLine struct {
	w io.Writer // nil: show nothing

	mu    sync.Mutex
	next  time.Time // before this, updates that are not final are dropped
	width int       // length of the line on screen; 0 when none is
}

// progressInterval is the least time between two drawn updates.
const progressInterval = 100 * time.Millisecond

// progress returns a progressLine on stderr when stderr is a terminal, and
// one that shows nothing otherwise.
func (c *cli) progress() *progressLine {
	if f, ok := c.stderr.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return &progressLine{w: f}
		}
	}
	return &progressLine{}
}

// show draws the line, unless the last one was drawn less than
// progressInterval ago and final is false.
func (p *progressLine) show(final bool, format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !final && now.Before(p.next) {
		return
	}
	p.next = now.Add(progressInterval)
	line := fmt.Sprintf(format, args...)
	// Blank what is left of a longer line before.
	fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", max(p.width-len(line), 0)))
	p.width = len(line)
}

// end ends the line shown, if any, so that the next output starts on a
// line of its own.
func (p *progressLine) end() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.width > 0 {
		fmt.Fprintln(p.w)
		p.width = 0
		p.next = time.Time{}
	}
}
