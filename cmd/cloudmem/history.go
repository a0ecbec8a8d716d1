package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/config"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

func init() { register(newHistoryCmd) }

// newHistoryCmd is "cloudmem history PATH" (the versions of a memory file)
// and "cloudmem history prune" (apply the store's retention).
func newHistoryCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history PATH",
		Short: "List the versions of a memory file: who changed it, when and how",
		Long: "Lists every version of the memory file PATH, oldest first, with the versions it had under\n" +
			"earlier paths (renames) and its deletion: VERSION, TIME, ACTOR, OPERATION, SIZE and PATH.\n" +
			"The current version is marked with *. A state that has no record (a file that existed\n" +
			"before history was turned on, or was changed without it) shows as \"unrecorded\".\n" +
			"--json prints a JSON array instead. History is recorded by stores opened with history=on;\n" +
			"the history commands read the records of any store.",
		Args: positional("PATH"),
		RunE: func(cmd *cobra.Command, args []string) error {
			hs, _, done, err := a.openHistory(cmd.Context(), readOnly)
			if err != nil {
				return err
			}
			defer done()
			key, err := resolveFile(args[0])
			if err != nil {
				return err
			}
			vs, err := hs.History(cmd.Context(), key)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printVersionsJSON(vs)
			}
			return a.printVersions(vs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of the versions")
	cmd.AddCommand(newPruneCmd(a))
	return cmd
}

// newPruneCmd is "cloudmem history prune".
func newPruneCmd(a *app) *cobra.Command {
	var keep int
	var maxAge string
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Remove the versions the store's retention no longer keeps",
		Long: "Removes, from the history of every path, the versions beyond the last history_keep\n" +
			"and older than history_max_age (the store URL's parameters, or --keep and --max-age).\n" +
			"The last version of each path and its current version are always kept.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keep < 0 {
				return usageErrorf("--keep %d: want 0 or more", keep)
			}
			var age time.Duration
			if maxAge != "" {
				q := url.Values{history.ParamHistory: {"on"}, history.ParamMaxAge: {maxAge}}
				p, _, err := history.ParseParams(q)
				if err != nil {
					return usageErrorf("--max-age %s: want a duration such as 720h or 30d", maxAge)
				}
				age = p.MaxAge
			}
			override := func(o *history.Options) {
				if cmd.Flags().Changed("keep") {
					o.Keep = keep
				}
				if maxAge != "" {
					o.MaxAge = age
				}
			}
			hs, _, done, err := a.openHistoryWith(cmd.Context(), readWrite, override)
			if err != nil {
				return err
			}
			defer done()
			res, err := hs.Prune(cmd.Context())
			if err != nil {
				return historyWriteError(err, "prune deletes versions from its history") // no success line before the error
			}
			_, err = fmt.Fprintf(a.stdout, "Removed %s, kept %d.\n", plural(res.Removed, "version"), res.Kept)
			return err
		},
	}
	cmd.Flags().IntVar(&keep, "keep", 0, "keep the last `N` versions of each path (default: the URL's history_keep)")
	cmd.Flags().StringVar(&maxAge, "max-age", "", "keep the versions younger than `DURATION`, e.g. 720h or 30d (default: the URL's history_max_age)")
	return cmd
}

// historyWriteError returns err, the failure of a command that writes the
// history itself (redact, prune), for a person: on a read-only store, a
// readOnlyHistoryError saying that the command does what does; any other
// error as it is.
func historyWriteError(err error, does string) error {
	if errors.Is(err, blob.ErrReadOnly) {
		return &readOnlyHistoryError{does: does, err: err}
	}
	return err
}

// readOnlyHistoryError is the failure of redact or prune on a read-only
// store (docs/spec.md "redact and prune on a read-only store"): one line
// with the cause and what to check. The store's error, which names the key
// of the record it would have written (a dry run's does), stays inside it,
// for errors.Is, and out of the line.
type readOnlyHistoryError struct {
	does string // what the command does to the history
	err  error
}

func (e *readOnlyHistoryError) Error() string {
	return "the store is read-only, and " + e.does + " (check readonly= in the store URL)"
}

func (e *readOnlyHistoryError) Unwrap() error { return e.err }

// openHistory opens the configured store for acc with its history (see
// openWithHistory), configured by the URL's history parameters (history=on
// or not: the records of a store whose history was turned off stay
// readable). It returns the history Store, which the history commands
// read, and the store to write memory files through.
func (a *app) openHistory(ctx context.Context, acc access) (hs *history.Store, write blob.Store, done func(), err error) {
	return a.openHistoryWith(ctx, acc, nil)
}

// openHistoryWith is openHistory with a function that adjusts the Options.
func (a *app) openHistoryWith(ctx context.Context, acc access, adjust func(*history.Options)) (*history.Store, blob.Store, func(), error) {
	if len(a.mounts) > 0 {
		return nil, nil, nil, usageErrorf("the history commands work on one store: leave out --mount and name it with --store")
	}
	return a.openWithHistory(ctx, a.storeURL(), acc, adjust)
}

// openWithHistory opens the store raw names for acc, with a history Store
// in history's place among its layers (storeurl.Options.Layers) whether the
// URL turns history on or not, configured by raw's history parameters and
// adjust (when not nil). It returns the history Store, the whole store to
// write memory files through (the write policy, read-only and limits layers
// above the history Store, as storeurl puts them) and the function that
// closes them. What is written through the history Store is recorded,
// whether the URL turns history on or not (a restore is).
//
// The commands write through the history Store directly (prune, redact),
// beneath the readonly layer: a read-only store (acc readOnly, or the
// URL's readonly=true) is read-only beneath the history Store too, as
// storeurl.Options.Layers hands it over, so they fail with the store's
// refusal. A dry run (dryRunAccess) puts blob.DryRun right beneath the history
// Store, so that what history itself writes (its records, a redaction)
// stays in the dry run too. The telemetry layer (otel.go) sits there as
// well, above the dry run, so that the storage calls of the history Store
// itself (its records) are traced, and not only those through the whole
// store.
func (a *app) openWithHistory(ctx context.Context, raw string, acc access, adjust func(*history.Options)) (*history.Store, blob.Store, func(), error) {
	if config.IsName(raw) { // a --mount value may name a store of the config file
		st, err := a.namedStore(raw)
		if err != nil {
			return nil, nil, nil, err
		}
		if st.URL == "" {
			return nil, nil, nil, usageErrorf("the store %q is a mount table: its history is that of each of its stores; mount each by its URL", raw)
		}
		raw = st.URL
	}
	if err := checkBarePath(raw); err != nil {
		return nil, nil, nil, err
	}
	var hs *history.Store
	layer := func(_ context.Context, s blob.Store, params url.Values) (blob.Store, error) {
		opts, _, err := history.ParseParams(params) // checked by history's own Check
		if err != nil {
			return nil, err
		}
		if adjust != nil {
			adjust(&opts)
		}
		opts.Logger = a.logger()
		if opts.Actor == "" {
			opts.Actor = defaultActor(a.getenv)
		}
		hs, err = history.New(a.instrumentStore(forAccess(s, acc), raw), &opts)
		return hs, err
	}
	s, err := storeurl.OpenWith(ctx, raw, storeurl.Options{ReadOnly: acc == readOnly,
		Layers: map[string]storeurl.WrapFunc{"history": layer}})
	if err != nil {
		return nil, nil, nil, err
	}
	return hs, s, func() { blob.Close(s) }, nil
}

// resolveFile maps a /memories path to its store key, refusing the root.
func resolveFile(path string) (string, error) {
	key, err := memory.Resolve(memPath(path))
	if err != nil {
		return "", err
	}
	if key == "" {
		return "", usageErrorf("%s is the memory directory, not a file", path)
	}
	return key, nil
}

// Version prefixes: a VERSION on the command line is a unique prefix of a
// version id, as git takes a commit's; at least minPrefix digits.
const (
	minPrefix = 4
	idDigits  = 16 // a whole version id
)

// resolveRef parses PATH@VERSION into a store key and a version as typed:
// a whole id, or a prefix of one that resolveVersion completes. A PATH
// not starting with / is relative to /memories.
func resolveRef(ref string) (key, version string, err error) {
	i := strings.LastIndexByte(ref, '@')
	if i <= 0 {
		_, _, err := history.ParseRef(ref) // no @, or no path: its error
		return "", "", usageErrorf("%v", err)
	}
	version = strings.ToLower(ref[i+1:])
	if !isVersionPrefix(version) {
		return "", "", usageErrorf("%v: %q: a version is %d to %d hexadecimal digits, as history lists them",
			history.ErrBadRef, ref, minPrefix, idDigits)
	}
	key, err = resolveFile(ref[:i])
	return key, version, err
}

// isVersionPrefix reports whether v is minPrefix to idDigits lowercase
// hexadecimal digits.
func isVersionPrefix(v string) bool {
	if len(v) < minPrefix || len(v) > idDigits {
		return false
	}
	for _, c := range v {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// resolveVersion returns the id of the version of the file key that the
// version typed (resolveRef) names: a whole id as it is, a prefix the one
// id of the file's history that starts with it. No such id, or several,
// is an error that says so.
func resolveVersion(ctx context.Context, hs *history.Store, key, version string) (string, error) {
	if len(version) == idDigits {
		return version, nil
	}
	vs, err := hs.History(ctx, key)
	if err != nil {
		return "", err
	}
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	return matchVersion(ids, version, key)
}

// matchVersion returns the one id of ids, the versions of the file key,
// that starts with version.
func matchVersion(all []string, version, key string) (string, error) {
	var ids []string
	for _, id := range all {
		if strings.HasPrefix(id, version) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no version %s of %s", version, memory.PathOf(key))
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("version %s of %s is ambiguous: %s", version, memory.PathOf(key), strings.Join(ids, ", "))
}

// versionJSON is one version in --json output; paths are memory paths.
type versionJSON struct {
	Version      string             `json:"version"`
	Time         time.Time          `json:"time"`
	Actor        string             `json:"actor"`
	Operation    history.Op         `json:"operation"`
	Path         string             `json:"path"`
	From         string             `json:"from,omitempty"`
	Size         int64              `json:"size"`
	SHA256       string             `json:"sha256"`
	RestoredFrom string             `json:"restored_from,omitempty"`
	Policy       string             `json:"policy,omitempty"`
	Redacted     *history.Redaction `json:"redacted,omitempty"`
	Current      bool               `json:"current"`
}

func toJSON(v history.Version) versionJSON {
	out := versionJSON{Version: v.ID, Time: v.Time, Actor: v.Actor, Operation: v.Op, Path: memory.PathOf(v.Path),
		Size: v.Size, SHA256: v.SHA256, RestoredFrom: v.RestoredFrom, Policy: v.Policy, Redacted: v.Redacted, Current: v.Current}
	if v.From != "" {
		out.From = memory.PathOf(v.From)
	}
	return out
}

func (a *app) printVersionsJSON(vs []history.Version) error {
	out := make([]versionJSON, len(vs))
	for i, v := range vs {
		out[i] = toJSON(v)
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
}

// printVersions writes the table of history PATH.
func (a *app) printVersions(vs []history.Version) error {
	w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  VERSION\tTIME\tACTOR\tOPERATION\tSIZE\tPATH")
	for _, v := range vs {
		mark, id, when, op := " ", v.ID, "-", string(v.Op)
		if v.Current {
			mark = "*"
		}
		if id == "" {
			id = "-"
		}
		if !v.Time.IsZero() {
			when = v.Time.UTC().Format(time.RFC3339)
		}
		if v.Redacted != nil {
			op += " (redacted)"
		}
		path := memory.PathOf(v.Path)
		if v.From != "" {
			path += " (from " + memory.PathOf(v.From) + ")"
		}
		actor := v.Actor
		if actor == "" {
			actor = "-"
		}
		fmt.Fprintf(w, "%s %s\t%s\t%s\t%s\t%d\t%s\n", mark, id, when, actor, op, v.Size, path)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	return nil
}
