package integration

import (
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/policy"
	"github.com/cloudmem/cloudmem/storeurl"
)

// A real short expiry rule (2s) on every server, by the server's own
// modification time and this machine's clock, with history on: the file
// is there, then absent to view and listings, a create writes over it, and
// the sweep deletes the next one; both deletions are recorded as
// policy:expire.
func TestExpiryOverServers(t *testing.T) {
	rule := &policy.Policy{Expire: []policy.ExpireRule{{Path: "/memories/scratch/**", After: 2 * time.Second}}}
	for _, cs := range cloudStores {
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			hist, err := history.New(cs.prefixed(t), &history.Options{Actor: "agent", Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			s := storeurl.Expiring(hist, rule, nil)
			h, err := memory.New(s, memory.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			// write creates path and returns when it expires, by the
			// server's time of it.
			write := func(path, text string) time.Time {
				t.Helper()
				if res := h.Create(ctx, path, text); res.IsError {
					t.Fatal(res.Text)
				}
				key, _ := memory.Resolve(path)
				info, err := hist.Stat(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if info.Modified.IsZero() {
					t.Fatalf("%s: the server reports no modification time", cs.name)
				}
				// Every read decides by the same time: List's is Stat's.
				listed, err := blob.ListAll(ctx, hist, key)
				if err != nil || len(listed) != 1 || !listed[0].Modified.Equal(info.Modified) {
					t.Fatalf("List of %s: %+v, %v; Stat's time %v", key, listed, err, info.Modified)
				}
				return info.Modified.Add(2 * time.Second)
			}
			at := write("/memories/scratch/a.md", "a")
			write("/memories/keep.md", "k")
			if res := h.View(ctx, "/memories/scratch/a.md", nil); res.IsError && time.Now().Before(at) {
				t.Errorf("before it expired: %s", res.Text)
			}
			time.Sleep(time.Until(at))
			for _, c := range []struct{ path, want string }{
				{"/memories/scratch/a.md", "Error: The path /memories/scratch/a.md does not exist. Please provide a valid path."},
				{"/memories", "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n1B\t/memories\n1B\t/memories/keep.md"},
			} {
				if res := h.View(ctx, c.path, nil); res.Text != c.want {
					t.Errorf("view %s: %q, want %q", c.path, res.Text, c.want)
				}
			}
			if res := h.Create(ctx, "/memories/scratch/a.md", "again"); res.Text != "File created successfully at: /memories/scratch/a.md" {
				t.Errorf("create over it: %q", res.Text)
			}
			// (a.md, written again, has expired meanwhile.)
			// Names: an expired file does not hold its name as a file, nor
			// as a directory (MinIO keeps witnesses of names, the file
			// store refuses a name taken either way).
			write("/memories/scratch/f", "f")
			at = write("/memories/scratch/d/x.md", "x")
			time.Sleep(time.Until(at))
			for _, p := range []string{"/memories/scratch/f/y.md", "/memories/scratch/d"} {
				if res := h.Create(ctx, p, "n"); res.Text != "File created successfully at: "+p {
					t.Errorf("create %s: %q", p, res.Text)
				}
			}
			want := "Here're the files and directories up to 2 levels deep in /memories/scratch, excluding hidden items and node_modules:\n" +
				"2B\t/memories/scratch\n1B\t/memories/scratch/d\n1B\t/memories/scratch/f/\n1B\t/memories/scratch/f/y.md"
			if res := h.View(ctx, "/memories/scratch", nil); res.Text != want {
				t.Errorf("view:\n%s\nwant:\n%s", res.Text, want)
			}

			at = write("/memories/scratch/b.md", "b")
			time.Sleep(time.Until(at))
			var swept []string
			for info, err := range blob.Expire(ctx, s, false) {
				if err != nil {
					t.Fatal(err)
				}
				swept = append(swept, info.Key)
			}
			// a.md, written again, may have expired too by now.
			if !slices.Contains(swept, "scratch/b.md") || slices.Contains(swept, "keep.md") {
				t.Errorf("the sweep deleted %q", swept)
			}
			if _, err := hist.Stat(ctx, "scratch/b.md"); !errors.Is(err, blob.ErrNotExist) {
				t.Errorf("scratch/b.md is still stored: %v", err)
			}
			for _, key := range []string{"scratch/a.md", "scratch/b.md"} {
				vs, err := hist.History(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				i := slices.IndexFunc(vs, func(v history.Version) bool { return v.Op == history.OpDeleted })
				if i < 0 || vs[i].Actor != blob.ExpireActor {
					t.Errorf("%s: no deletion recorded as %s: %+v", key, blob.ExpireActor, vs)
				}
			}
		})
	}
}
