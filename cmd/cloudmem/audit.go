package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

func init() { register(newAuditCmd) }

// auditLine is one line of "cloudmem audit"; paths are memory paths.
type auditLine struct {
	Time         time.Time  `json:"time"`
	Actor        string     `json:"actor"`
	Operation    history.Op `json:"operation"`
	Path         string     `json:"path"`
	From         string     `json:"from,omitempty"`
	Version      string     `json:"version"`
	Size         int64      `json:"size"`
	SHA256       string     `json:"sha256"`
	RestoredFrom string     `json:"restored_from,omitempty"`
}

// newAuditCmd is "cloudmem audit [--since T] [--actor A]".
func newAuditCmd(a *app) *cobra.Command {
	var since, actor string
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Print every recorded change of the store as JSON lines, in time order",
		Long: "Prints one JSON object per line for every recorded change of the store (and every\n" +
			"redaction), oldest first: time, actor, operation, path, version, size, sha256. --since\n" +
			"keeps the changes from a time on (RFC 3339, a date YYYY-MM-DD, or a duration such as 24h\n" +
			"meaning that long ago); --actor keeps one actor's.",
		Args: positional(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var f history.AuditFilter
			if since != "" {
				t, err := parseSince(since, time.Now())
				if err != nil {
					return usageErrorf("--since %s: %v", since, err)
				}
				f.Since = t
			}
			f.Actor = actor
			hs, _, done, err := a.openHistory(cmd.Context(), readOnly)
			if err != nil {
				return err
			}
			defer done()
			events, err := hs.Audit(cmd.Context(), f)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(a.stdout)
			for _, e := range events {
				line := auditLine{Time: e.Time, Actor: e.Actor, Operation: e.Op, Path: memory.PathOf(e.Path),
					Version: e.Version, Size: e.Size, SHA256: e.SHA256, RestoredFrom: e.RestoredFrom}
				if e.From != "" {
					line.From = memory.PathOf(e.From)
				}
				if err := enc.Encode(line); err != nil {
					return fmt.Errorf("writing stdout: %w", err)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only the changes from `TIME` on (RFC 3339, YYYY-MM-DD, or a duration ago such as 24h)")
	cmd.Flags().StringVar(&actor, "actor", "", "only the changes of `ACTOR`")
	return cmd
}

// parseSince reads --since: an RFC 3339 time, a date (midnight UTC), or a
// duration before now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("want a time such as 2026-12-01T09:00:00Z, a date such as 2026-12-01, or a duration such as 24h")
}
