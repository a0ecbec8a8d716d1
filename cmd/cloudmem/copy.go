package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/transfer"
)

func init() { register(newCopyCmd) }

// newCopyCmd is "cloudmem copy SRC_URL DST_URL": it copies every file of
// one store to another, then verifies the copy. See transfer.Copy and
// transfer.Verify.
func newCopyCmd(a *app) *cobra.Command {
	var (
		jobs              int
		overwrite, dryRun bool
	)
	cmd := &cobra.Command{
		Use:   "copy SRC_URL DST_URL [--jobs N] [--overwrite] [--dry-run]",
		Short: "Copy a whole store to another store, and verify the copy",
		Long: "Copies every file of the store SRC_URL to the store DST_URL (any two store URLs: a directory\n" +
			"to a bucket, a plain store into an encrypted one), then reads both back and compares the\n" +
			"SHA-256 of every file. A file DST already holds with the same content is skipped, so an\n" +
			"interrupted copy can be run again; one with other content is an error unless --overwrite.\n" +
			"Each store's own bookkeeping (.cloudmem/, such as an encryption key) is not copied.\n" +
			"Exit status 1 when a file could not be copied or the verification finds a difference.\n" +
			"--dry-run makes every check of the copy, prints what it would copy and changes nothing.",
		Args: positional("SRC_URL", "DST_URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if jobs < 1 {
				return usageErrorf("--jobs %d: want 1 or more", jobs)
			}
			return a.copy(cmd.Context(), args[0], args[1], jobs, overwrite, dryRun)
		},
	}
	cmd.Flags().IntVar(&jobs, "jobs", transfer.DefaultJobs, "copy `N` files at a time")
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace files DST holds with other content")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be copied and change nothing")
	return cmd
}

// copy copies the store srcURL to dstURL with transfer.Copy, then checks
// the copy with transfer.Verify, printing the counts.
func (a *app) copy(ctx context.Context, srcURL, dstURL string, jobs int, overwrite, dryRun bool) error {
	src, err := a.openURL(ctx, srcURL, readOnly)
	if err != nil {
		return fmt.Errorf("SRC: %w", err)
	}
	defer blob.Close(src)
	acc := readWrite
	if dryRun {
		acc = dryRunAccess // the copy is made in the dry run's memory; nothing reaches DST
	}
	dst, err := a.openURL(ctx, dstURL, acc)
	if err != nil {
		return fmt.Errorf("DST: %w", err)
	}
	defer blob.Close(dst)

	p := a.progress()
	show := func(final bool, s transfer.CopyStats) {
		p.show(final, "copy: %d/%d files (%d copied, %d skipped)", s.Copied+s.Skipped+s.Gone, s.Total, s.Copied, s.Skipped)
	}
	stats, err := transfer.Copy(ctx, src, dst, &transfer.CopyOptions{Jobs: jobs, Overwrite: overwrite,
		Progress: func(s transfer.CopyStats) { show(false, s) }})
	show(true, stats)
	p.end()
	switch pe, ok := errors.AsType[*transfer.ProblemsError](err); {
	case errors.Is(err, transfer.ErrEmptySource):
		return errors.New("SRC holds no memory file: nothing to copy (check SRC_URL)")
	case ok && dryRun:
		return problemsFailure(pe.Problems,
			fmt.Sprintf("%d of %d files would not be copied (%d would be copied, %d skipped)", len(pe.Problems), stats.Total, stats.Copied, stats.Skipped))
	case ok:
		return problemsFailure(pe.Problems,
			fmt.Sprintf("%d of %d files were not copied (%d copied, %d skipped)", len(pe.Problems), stats.Total, stats.Copied, stats.Skipped))
	case err != nil:
		return srcDst(err, "", fmt.Sprintf(" (%s copied; run copy again to finish)", plural(stats.Copied, "file")))
	}
	if dryRun {
		_, err := fmt.Fprintf(a.stdout, "would copy %s, skip %d that DST already holds\n", plural(stats.Copied, "file"), stats.Skipped)
		return err
	}
	fmt.Fprintf(a.stdout, "copied %s, skipped %d that DST already held\n", plural(stats.Copied, "file"), stats.Skipped)

	v, err := transfer.Verify(ctx, src, dst, &transfer.VerifyOptions{Jobs: jobs, Progress: func(done, total int) {
		p.show(done == total, "verify: %d/%d files", done, total)
	}})
	p.end()
	if pe, ok := errors.AsType[*transfer.ProblemsError](err); ok {
		return problemsFailure(pe.Problems,
			fmt.Sprintf("verification failed: %d of %d files differ", len(pe.Problems), v.Files))
	}
	if err != nil {
		return srcDst(err, "verify: ", "")
	}
	fmt.Fprintf(a.stdout, "verified %s: every SHA-256 is equal", plural(v.Files, "file"))
	if v.Extra > 0 {
		fmt.Fprintf(a.stdout, " (DST also holds %s that SRC does not)", plural(v.Extra, "file"))
	}
	fmt.Fprintln(a.stdout)
	return nil
}

// srcDst returns err, an error of transfer, with the store it came from
// named as the command line names them, SRC or DST, between prefix and
// suffix.
func srcDst(err error, prefix, suffix string) error {
	if se, ok := errors.AsType[*transfer.StoreError](err); ok {
		side := "SRC: "
		if se.Side == transfer.Destination {
			side = "DST: "
		}
		return &noteError{prefix + side, suffix, se.Err}
	}
	return &noteError{prefix, suffix, err}
}

// problemsFailure is the error of a command that found problems with some
// files: one line per problem, then outcome. A problem of kind
// transfer.ErrDiffers says that --overwrite replaces the file.
func problemsFailure(problems []transfer.Problem, outcome string) error {
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = p.String()
		if errors.Is(p.Kind, transfer.ErrDiffers) {
			lines[i] += " (--overwrite replaces it)"
		}
	}
	return &problemsError{problems: lines, outcome: outcome}
}

// plural returns "1 file", "2 files": n and the noun, plural when n is
// not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
func (a *app) progress() *progressLine {
	if f, ok := a.stderr.(*os.File); ok {
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
