package history_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
)

// exampleStore returns a history Store over an in-memory store, with a
// clock that starts at 09:00 and advances a minute per change, and a
// memory handler over it.
func exampleStore(opts history.Options) (*history.Store, *memory.Handler) {
	t := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	opts.Now = func() time.Time { t = t.Add(time.Minute); return t }
	hs, err := history.New(mem.New(nil), &opts)
	if err != nil {
		log.Fatal(err)
	}
	h, err := memory.New(hs, memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	return hs, h
}

func Example() {
	hs, h := exampleStore(history.Options{Actor: "cli@laptop"})
	ctx := blob.WithActor(context.Background(), "session 42")
	h.Create(ctx, "/memories/notes.md", "Use tabs.\n")
	h.StrReplace(context.Background(), "/memories/notes.md", "tabs", "spaces") // the default actor
	h.Rename(ctx, "/memories/notes.md", "/memories/style.md")

	versions, err := hs.History(ctx, "style.md")
	if err != nil {
		log.Fatal(err)
	}
	for _, v := range versions {
		fmt.Println(v.Time.Format("15:04"), v.Actor, v.Op, v.Path, v.Size, v.Current)
	}
	// Output:
	// 09:01 session 42 created notes.md 10 false
	// 09:02 cli@laptop modified notes.md 12 false
	// 09:03 session 42 renamed style.md 12 true
}

func ExampleStore_Restore() {
	hs, h := exampleStore(history.Options{})
	ctx := context.Background()
	h.Create(ctx, "/memories/todo.md", "- ship v2\n")
	h.StrReplace(ctx, "/memories/todo.md", "- ship v2\n", "")
	versions, _ := hs.History(ctx, "todo.md")

	// The restore writes through the handler, under the tree's rules.
	write := func(ctx context.Context, key string, data []byte, ifVersion string) error {
		_, err := h.Write(ctx, memory.PathOf(key), data, ifVersion)
		return err
	}
	v, err := hs.Restore(ctx, "todo.md", versions[0].ID, write)
	if err != nil {
		log.Fatal(err)
	}
	data, _ := h.ReadFile(ctx, "/memories/todo.md")
	fmt.Printf("%s, restored from the first version: %v\n%s", v.Op, v.RestoredFrom == versions[0].ID, data)
	// Output:
	// modified, restored from the first version: true
	// - ship v2
}

func ExampleStore_Redact() {
	hs, h := exampleStore(history.Options{})
	ctx := context.Background()
	h.Create(ctx, "/memories/env.md", "token: hunter2\n")
	h.StrReplace(ctx, "/memories/env.md", "hunter2", "(in the vault)")
	versions, _ := hs.History(ctx, "env.md")

	redacted, err := hs.Redact(blob.WithActor(ctx, "dpo"), "env.md", versions[0].ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(redacted), "version redacted by", redacted[0].Redacted.Actor)
	_, _, err = hs.Show(ctx, "env.md", versions[0].ID)
	fmt.Println("content gone:", errors.Is(err, history.ErrNoContent))
	// Output:
	// 1 version redacted by dpo
	// content gone: true
}

func ExampleUnifiedDiff() {
	fmt.Print(history.UnifiedDiff("a@v1", "a", []byte("x\ny\n"), []byte("x\nz\n")))
	// Output:
	// --- a@v1
	// +++ a
	// @@ -1,2 +1,2 @@
	//  x
	// -y
	// +z
}

func ExampleStore_Audit() {
	hs, h := exampleStore(history.Options{Actor: "cli"})
	ctx := context.Background()
	h.Create(blob.WithActor(ctx, "agent-1"), "/memories/a.md", "a\n")
	h.Create(ctx, "/memories/b.md", "b\n")
	h.Delete(blob.WithActor(ctx, "agent-1"), "/memories/a.md")

	events, err := hs.Audit(ctx, history.AuditFilter{Actor: "agent-1"})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range events {
		fmt.Println(e.Time.Format(time.RFC3339), e.Actor, e.Op, e.Path)
	}
	// Output:
	// 2026-12-01T09:01:00Z agent-1 created a.md
	// 2026-12-01T09:03:00Z agent-1 deleted a.md
}

func ExampleStore_Prune() {
	hs, h := exampleStore(history.Options{Keep: 2})
	ctx := context.Background()
	h.Create(ctx, "/memories/n.md", "0")
	for _, s := range []string{"1", "2", "3"} {
		h.Insert(ctx, "/memories/n.md", 0, s+"\n") // a new version each time
	}
	res, err := hs.Prune(ctx)
	if err != nil {
		log.Fatal(err)
	}
	versions, _ := hs.History(ctx, "n.md")
	fmt.Println(res.Removed, "removed,", len(versions), "left")
	// Output:
	// 2 removed, 2 left
}

func ExampleParseRef() {
	path, id, err := history.ParseRef("/memories/notes.md@019a3c2e8f1b4d2a")
	fmt.Println(path, id, err)
	_, _, err = history.ParseRef("/memories/notes.md")
	fmt.Println(err)
	// Output:
	// /memories/notes.md 019a3c2e8f1b4d2a <nil>
	// history: malformed PATH@VERSION: "/memories/notes.md" has no @VERSION
}
