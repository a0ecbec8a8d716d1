package mount_test

import (
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// A team's shared knowledge, read-only, beside a user's own notes. Each
// store could come from its own URL (storeurl.Open), with its own prefix and
// encryption.
func Example() {
	ctx := context.Background()
	team := mem.New(nil)
	team.Put(ctx, "style.md", []byte("Use tabs.\n"), blob.Cond{})

	store, err := mount.New([]mount.Mount{
		{Name: "team", Store: team, ReadOnly: true},
		{Name: "me", Store: mem.New(nil)},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer blob.Close(store)
	h, err := memory.New(store, memory.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, input := range []string{
		`{"command":"view","path":"/memories"}`,
		`{"command":"create","path":"/memories/team/new.md","file_text":"x"}`,
		`{"command":"rename","old_path":"/memories/team/style.md","new_path":"/memories/me/style.md"}`,
		`{"command":"create","path":"/memories/me/todo.md","file_text":"- milk\n"}`,
		`{"command":"delete","path":"/memories/me"}`,
	} {
		fmt.Println(h.Execute(ctx, []byte(input)).Text)
	}
	// Output:
	// Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:
	// 10B	/memories
	// 0B	/memories/me/
	// 10B	/memories/team/
	// 10B	/memories/team/style.md
	// Error: The memory directory is read-only: create is not allowed
	// Error: Cannot move /memories/team/style.md to /memories/me/style.md: the mount point /memories/team is read-only
	// File created successfully at: /memories/me/todo.md
	// Error: Cannot delete the mount point /memories/me
}
