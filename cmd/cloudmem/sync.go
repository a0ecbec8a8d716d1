package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/dirsync"
)

func init() { register(newSyncCmd) }

func newSyncCmd(a *app) *cobra.Command {
	var (
		watch, dryRun, allowDeletes bool
		maxDeletes                  int
		interval, grace             time.Duration
		stateFile, machine          string
	)
	cmd := &cobra.Command{
		Use:   "sync DIR",
		Short: "Keep a local folder of memory files in step with the store (two-way)",
		Long: `sync joins the local folder DIR to the store: files changed on one side are copied to the
other, files changed on both sides are both kept (this machine's content under a conflict name
beside the file, NAME.conflict-MACHINE-HASH.EXT), and deletes propagate only when the other side
is unchanged. A pass that would delete more than --max-deletes files changes nothing unless
--allow-deletes is given. Symbolic links are never followed; files the memory tool could not hold
(too large, reserved or invalid names) are skipped with a reason.

Without --watch it runs one pass; with --watch it keeps syncing: after local changes (debounced)
and every --interval for the store's changes, holding deletes back for --grace.

The sync state (what both sides held after the last pass) is kept per folder and store in
$XDG_STATE_HOME/cloudmem/sync (default ~/.local/state/cloudmem/sync), or in --state FILE.
Exit status 1 when anything conflicted or failed.`,
		Args: positional("DIR"),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := filepath.Abs(args[0])
			if err != nil {
				return err
			}
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				return usageErrorf("%s is not a directory", args[0])
			}
			if watch && dryRun {
				return usageErrorf("--watch and --dry-run do not go together")
			}
			if stateFile == "" {
				if stateFile, err = a.syncStatePath(dir); err != nil {
					return err
				}
			}
			if !watch && !cmd.Flags().Changed("grace") {
				grace = 0 // the default holds deletes back for --watch only
			}
			acc := readWrite
			if dryRun {
				acc = readOnly
			}
			s, err := a.openStore(cmd.Context(), acc)
			if err != nil {
				return err
			}
			defer blob.Close(s)
			opts := dirsync.Options{
				StateFile: stateFile, Machine: machine, MaxDeletes: maxDeletes, AllowDeletes: allowDeletes,
				DeleteGrace: grace, DryRun: dryRun, Logger: a.logger(),
				Progress: func(done, total int) {
					fmt.Fprintf(a.stderr, "sync: looked at %d of %d files\n", done, total)
				},
			}
			if !watch {
				rep, err := dirsync.Sync(cmd.Context(), dir, s, opts)
				a.printSyncReport(rep)
				return err
			}
			return dirsync.Watch(cmd.Context(), dir, s, opts, dirsync.WatchOptions{
				Interval: interval,
				AfterPass: func(rep dirsync.Report, err error) {
					if len(rep.Actions) == 0 && len(rep.Failed) == 0 && err == nil {
						return // a quiet pass says nothing
					}
					a.printSyncReport(rep)
					if err != nil {
						fmt.Fprintf(a.stderr, "sync: %s\n", a.describe(err))
					}
				},
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&watch, "watch", false, "keep syncing until interrupted")
	f.BoolVar(&dryRun, "dry-run", false, "print what a pass would do, and change nothing")
	f.BoolVar(&allowDeletes, "allow-deletes", false, "let this pass delete more files than --max-deletes")
	f.IntVar(&maxDeletes, "max-deletes", dirsync.DefaultMaxDeletes, "the most files one pass may delete (negative: no cap)")
	f.DurationVar(&interval, "interval", dirsync.DefaultInterval, "with --watch, how often to pull the store's changes")
	f.DurationVar(&grace, "grace", dirsync.DefaultDeleteGrace, "with --watch, how long a delete must be seen before it propagates (a pass without --watch holds deletes back only when this is given)")
	f.StringVar(&stateFile, "state", "", "the sync state `FILE` (default: under $XDG_STATE_HOME/cloudmem/sync)")
	f.StringVar(&machine, "machine", "", "this machine's name, in conflict names and as the history's actor (default: the host name)")
	return cmd
}

// syncStatePath is the default state file of a sync of dir with the
// configured store: one per folder and store, named by a hash of both (the
// store URL is not written down, as it may name a user).
func (a *app) syncStatePath(dir string) (string, error) {
	base := a.getenv("XDG_STATE_HOME")
	if base == "" {
		home := a.getenv("HOME")
		if home == "" {
			return "", errors.New("neither $XDG_STATE_HOME nor $HOME is set: give the state file with --state FILE")
		}
		base = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(dir + "\n" + a.storeURL()))
	return filepath.Join(base, "cloudmem", "sync", hex.EncodeToString(sum[:8])+".json"), nil
}

// printSyncReport prints what a pass did: one line per action on stdout,
// skipped and failed files on stderr, then the summary line on stdout.
func (a *app) printSyncReport(rep dirsync.Report) {
	for _, act := range rep.Actions {
		if act.Note != "" {
			fmt.Fprintf(a.stdout, "%-13s %s (this machine's content kept as %s)\n", act.Op, act.Key, act.Note)
		} else {
			fmt.Fprintf(a.stdout, "%-13s %s\n", act.Op, act.Key)
		}
	}
	for _, p := range rep.Skipped {
		fmt.Fprintf(a.stderr, "skipped       %s: %s\n", p.Key, p.Reason)
	}
	for _, p := range rep.Failed {
		fmt.Fprintf(a.stderr, "failed        %s: %s\n", p.Key, p.Reason)
	}
	fmt.Fprintln(a.stdout, rep.Summary())
}
