package mount_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// seed is the content of the three mounts of the rule cases: team is
// read-only, me and empty are writable, and empty holds nothing.
var seed = map[string]string{
	"team/notes.md":   "team notes\n", // 11 bytes
	"team/guide/a.md": "guide\n",      // 6 bytes
	"me/todo.md":      "- milk\n",     // 7 bytes
	"me/proj/a.md":    "a",
	"me/proj/b.md":    "bb",
}

// rulesTable returns a table holding seed, and a Counter on each mounted
// store.
func rulesTable(t *testing.T) (blob.Store, map[string]*blob.Counter) {
	t.Helper()
	counters := map[string]*blob.Counter{}
	var mounts []mount.Mount
	for _, name := range []string{"team", "me", "empty"} {
		inner := mem.New(nil)
		for key, content := range seed {
			if rest, ok := cutMount(key, name); ok {
				put(t, inner, rest, content)
			}
		}
		counters[name] = blob.NewCounter(inner)
		mounts = append(mounts, mount.Mount{Name: name, Store: counters[name], ReadOnly: name == "team"})
	}
	return newTable(t, mounts...), counters
}

func cutMount(key, name string) (string, bool) {
	if len(key) > len(name) && key[:len(name)] == name && key[len(name)] == '/' {
		return key[len(name)+1:], true
	}
	return "", false
}

// A rule case: one command on the rules table, its whole Result, and the
// whole table afterwards (nil: unchanged, and no write reached any store).
type ruleCase struct {
	name  string
	opts  memory.Options
	input string
	want  string // the whole text; errors start with "Error: "
	kind  error  // the Kind of Result.Err; nil for success
	after map[string]string
}

func cmd(pairs ...string) string {
	s := "{"
	for i := 0; i < len(pairs); i += 2 {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf("%q:%q", pairs[i], pairs[i+1])
	}
	return s + "}"
}

const outside = " is outside every mount point. Use a path inside one of: /memories/empty, /memories/me, /memories/team"

func changed(edits map[string]string) map[string]string {
	after := maps.Clone(seed)
	for k, v := range edits {
		if v == "" {
			delete(after, k)
		} else {
			after[k] = v
		}
	}
	return after
}

func ruleCases() []ruleCase {
	const header = "Here're the files and directories up to 2 levels deep in "
	const tail = ", excluding hidden items and node_modules:\n"
	return []ruleCase{
		// The root lists every mount point, an empty one too, with its size.
		{name: "root lists the mount points", input: cmd("command", "view", "path", "/memories"),
			want: header + "/memories" + tail + "27B\t/memories\n0B\t/memories/empty/\n10B\t/memories/me/\n3B\t/memories/me/proj/\n7B\t/memories/me/todo.md\n" +
				"17B\t/memories/team/\n6B\t/memories/team/guide/\n11B\t/memories/team/notes.md"},
		{name: "an empty mount point exists", input: cmd("command", "view", "path", "/memories/empty/"),
			want: header + "/memories/empty" + tail + "0B\t/memories/empty"},
		{name: "a read-only mount is viewed", input: cmd("command", "view", "path", "/memories/team/notes.md"),
			want: "Here's the content of /memories/team/notes.md with line numbers:\n     1\tteam notes\n     2\t"},
		{name: "nothing outside the mounts", input: cmd("command", "view", "path", "/memories/x.md"),
			want: "Error: The path /memories/x.md does not exist. Please provide a valid path.", kind: memory.ErrNotFound},
		{name: "a mount's bookkeeping is reserved", input: cmd("command", "view", "path", "/memories/team/.cloudmem/crypt-key"),
			want: "Error: Path /memories/team/.cloudmem/crypt-key is reserved", kind: memory.ErrInvalidPath},
		{name: "a mount's bookkeeping is reserved deeper", input: cmd("command", "create", "path", "/memories/me/d/.cloudmem-lock", "file_text", "x"),
			want: "Error: Path /memories/me/d/.cloudmem-lock is reserved", kind: memory.ErrInvalidPath},

		// Mount points.
		{name: "delete a mount point", input: cmd("command", "delete", "path", "/memories/me"),
			want: "Error: Cannot delete the mount point /memories/me", kind: memory.ErrMountPoint},
		{name: "delete an empty mount point as sent", input: cmd("command", "delete", "path", "/memories//empty/"),
			want: "Error: Cannot delete the mount point /memories//empty/", kind: memory.ErrMountPoint},
		{name: "delete a read-only mount point", input: cmd("command", "delete", "path", "/memories/team"),
			want: "Error: Cannot delete the mount point /memories/team", kind: memory.ErrMountPoint},
		{name: "rename a mount point", input: cmd("command", "rename", "old_path", "/memories/me", "new_path", "/memories/mine"),
			want: "Error: Cannot rename the mount point /memories/me", kind: memory.ErrMountPoint},
		{name: "rename a mount point into another", input: cmd("command", "rename", "old_path", "/memories/empty", "new_path", "/memories/me/empty"),
			want: "Error: Cannot rename the mount point /memories/empty", kind: memory.ErrMountPoint},
		{name: "rename onto a mount point", input: cmd("command", "rename", "old_path", "/memories/me/todo.md", "new_path", "/memories/empty"),
			want: "Error: The destination /memories/empty already exists", kind: memory.ErrExists},
		{name: "create a mount point", input: cmd("command", "create", "path", "/memories/empty", "file_text", "x"),
			want: "Error: File /memories/empty already exists", kind: memory.ErrExists},
		{name: "str_replace a mount point", input: cmd("command", "str_replace", "path", "/memories/me", "old_str", "a", "new_str", "b"),
			want: "Error: The path /memories/me is not a file.", kind: memory.ErrNotFile},
		{name: "insert into a mount point", input: `{"command":"insert","path":"/memories/empty/.","insert_line":0,"insert_text":"x"}`,
			want: "Error: The path /memories/empty/. is not a file.", kind: memory.ErrNotFile},
		{name: "the root keeps its own texts", input: cmd("command", "delete", "path", "/memories/"),
			want: "Error: Cannot delete the /memories directory itself", kind: memory.ErrRoot},

		// Outside every mount point.
		{name: "create outside", input: cmd("command", "create", "path", "/memories/x.md", "file_text", "x"),
			want: "Error: The path /memories/x.md" + outside, kind: memory.ErrNotMounted},
		{name: "create a new top-level directory", input: cmd("command", "create", "path", "/memories/meX/a.md", "file_text", "x"),
			want: "Error: The path /memories/meX/a.md" + outside, kind: memory.ErrNotMounted},
		{name: "delete outside", input: cmd("command", "delete", "path", "/memories/nowhere"),
			want: "Error: The path /memories/nowhere" + outside, kind: memory.ErrNotMounted},
		{name: "str_replace outside", input: cmd("command", "str_replace", "path", "/memories/todo.md", "old_str", "a"),
			want: "Error: The path /memories/todo.md" + outside, kind: memory.ErrNotMounted},
		{name: "rename out of the mounts", input: cmd("command", "rename", "old_path", "/memories/me/todo.md", "new_path", "/memories/todo.md"),
			want: "Error: The path /memories/todo.md" + outside, kind: memory.ErrNotMounted},
		{name: "rename from outside", input: cmd("command", "rename", "old_path", "/memories/todo.md", "new_path", "/memories/me/t.md"),
			want: "Error: The path /memories/todo.md" + outside, kind: memory.ErrNotMounted},
		{name: "path errors come first", input: cmd("command", "create", "path", "/memories/x/../me/a.md", "file_text", "x"),
			want: "Error: Path /memories/x/../me/a.md would escape /memories directory", kind: memory.ErrInvalidPath},

		// Read-only mount.
		{name: "create in a read-only mount", input: cmd("command", "create", "path", "/memories/team/new.md", "file_text", "x"),
			want: "Error: The memory directory is read-only: create is not allowed", kind: memory.ErrReadOnly},
		{name: "str_replace in a read-only mount", input: cmd("command", "str_replace", "path", "/memories/team/notes.md", "old_str", "team", "new_str", "my"),
			want: "Error: The memory directory is read-only: str_replace is not allowed", kind: memory.ErrReadOnly},
		{name: "insert in a read-only mount", input: `{"command":"insert","path":"/memories/team/notes.md","insert_line":0,"insert_text":"x"}`,
			want: "Error: The memory directory is read-only: insert is not allowed", kind: memory.ErrReadOnly},
		{name: "delete in a read-only mount", input: cmd("command", "delete", "path", "/memories/team/guide"),
			want: "Error: The memory directory is read-only: delete is not allowed", kind: memory.ErrReadOnly},
		{name: "delete a missing file in a read-only mount", input: cmd("command", "delete", "path", "/memories/team/missing"),
			want: "Error: The memory directory is read-only: delete is not allowed", kind: memory.ErrReadOnly},
		{name: "rename within a read-only mount", input: cmd("command", "rename", "old_path", "/memories/team/notes.md", "new_path", "/memories/team/n.md"),
			want: "Error: The memory directory is read-only: rename is not allowed", kind: memory.ErrReadOnly},
		{name: "rename out of a read-only mount", input: cmd("command", "rename", "old_path", "/memories/team/notes.md", "new_path", "/memories/me/notes.md"),
			want: "Error: Cannot move /memories/team/notes.md to /memories/me/notes.md: the mount point /memories/team is read-only", kind: memory.ErrReadOnly},
		{name: "rename into a read-only mount", input: cmd("command", "rename", "old_path", "/memories/me/proj", "new_path", "/memories/team/proj"),
			want: "Error: Cannot move /memories/me/proj to /memories/team/proj: the mount point /memories/team is read-only", kind: memory.ErrReadOnly},

		// The writable mounts stay writable.
		{name: "create beside a read-only mount", input: cmd("command", "create", "path", "/memories/empty/new.md", "file_text", "new"),
			want: "File created successfully at: /memories/empty/new.md", after: changed(map[string]string{"empty/new.md": "new"})},
		{name: "rename a file across mounts", input: cmd("command", "rename", "old_path", "/memories/me/todo.md", "new_path", "/memories/empty/todo.md"),
			want: "Successfully renamed /memories/me/todo.md to /memories/empty/todo.md", after: changed(map[string]string{"me/todo.md": "", "empty/todo.md": "- milk\n"})},
		{name: "rename a directory across mounts", input: cmd("command", "rename", "old_path", "/memories/me/proj", "new_path", "/memories/empty/p/q"),
			want:  "Successfully renamed /memories/me/proj to /memories/empty/p/q",
			after: changed(map[string]string{"me/proj/a.md": "", "me/proj/b.md": "", "empty/p/q/a.md": "a", "empty/p/q/b.md": "bb"})},
		{name: "rename across mounts onto a file", input: cmd("command", "rename", "old_path", "/memories/me/proj", "new_path", "/memories/team/notes.md"),
			want: "Error: Cannot move /memories/me/proj to /memories/team/notes.md: the mount point /memories/team is read-only", kind: memory.ErrReadOnly},
		{name: "delete a directory of a mount", input: cmd("command", "delete", "path", "/memories/me/proj"),
			want: "Successfully deleted /memories/me/proj", after: changed(map[string]string{"me/proj/a.md": "", "me/proj/b.md": ""})},

		// The file limit is per mount: me holds 3 files, team 2, empty none.
		{name: "file limit counts the mount's files", opts: memory.Options{MaxFiles: 3}, input: cmd("command", "create", "path", "/memories/me/x.md", "file_text", "x"),
			want: "Error: The memory directory is full: it holds 3 files, the limit is 3. Delete or merge files first.", kind: memory.ErrFull},
		{name: "file limit leaves other mounts room", opts: memory.Options{MaxFiles: 1}, input: cmd("command", "create", "path", "/memories/empty/x.md", "file_text", "x"),
			want: "File created successfully at: /memories/empty/x.md", after: changed(map[string]string{"empty/x.md": "x"})},
	}
}

// TestMountRules checks the "Mounts" section of docs/spec.md, command by
// command, on a table of a read-only mount, a writable one and an empty
// one.
func TestMountRules(t *testing.T) {
	for _, c := range ruleCases() {
		t.Run(c.name, func(t *testing.T) {
			tab, counters := rulesTable(t)
			got := execute(t, tab, c.opts, c.input)
			if got.Text != c.want || got.IsError != (c.kind != nil) || got.Image != nil {
				t.Errorf("input %s\n got %s (is_error %v)\nwant %s", c.input, quote(got.Text), got.IsError, quote(c.want))
			}
			if c.kind != nil && !errors.Is(got.Err, c.kind) || c.kind == nil && got.Err != nil {
				t.Errorf("Err = %v, want kind %v", got.Err, c.kind)
			}
			after := c.after
			if after == nil {
				after = seed
				// A create refused as full may write the handler's file
				// count, and nothing else.
				full := strings.HasPrefix(c.want, "Error: The memory directory is full:")
				for name, n := range counters {
					if k := n.Counts(); k.Put+k.Delete+k.Rename+k.DeleteTree != 0 && !(full && k.Put == 1 && k.Delete+k.Rename+k.DeleteTree == 0) {
						t.Errorf("mount %s saw writes: %+v", name, k)
					}
				}
			}
			held := contents(t, tab)
			maps.DeleteFunc(held, func(k, _ string) bool { return memory.IsBookkeeping(k) })
			if !maps.Equal(held, after) {
				t.Errorf("the table holds %q\nwant %q", held, after)
			}
		})
	}
}

// A table whose every mount is read-only is a read-only store: writes are
// refused before any path is looked at, as for a read-only store alone.
func TestAllMountsReadOnly(t *testing.T) {
	tab := newTable(t, mount.Mount{Name: "a", Store: mem.New(nil), ReadOnly: true},
		mount.Mount{Name: "b", Store: blob.ReadOnly(mem.New(nil))})
	got := execute(t, tab, memory.Options{}, cmd("command", "create", "path", "/etc/passwd", "file_text", "x"))
	if want := "Error: The memory directory is read-only: create is not allowed"; got.Text != want || !errors.Is(got.Err, memory.ErrReadOnly) {
		t.Errorf("got %q (%v), want %q", got.Text, got.Err, want)
	}
}

// Each mount holds keys as long as its own store allows: a path too long
// for one mount is refused as too long before any storage call, while the
// same name fits in a roomier mount.
func TestKeyBudgetPerMount(t *testing.T) {
	narrow := blob.NewCounter(mem.New(nil))
	prefixed, err := blob.Prefix(narrow, strings.Repeat("p", 500)) // leaves 1024-501 bytes
	if err != nil {
		t.Fatal(err)
	}
	tab := newTable(t, mount.Mount{Name: "narrow", Store: prefixed}, mount.Mount{Name: "wide", Store: mem.New(nil)})
	name := strings.Repeat("n", 200) + "/" + strings.Repeat("n", 200) + "/" + strings.Repeat("n", 123) // 525 bytes
	for _, c := range []struct{ path, want string }{
		{"/memories/narrow/" + name, "Error: Path /memories/narrow/" + name + " is too long"},
		{"/memories/narrow/" + name + "/.cloudmem", "Error: Path /memories/narrow/" + name + "/.cloudmem is too long"}, // length before reserved
		{"/memories/narrow/x/../" + name, "Error: Path /memories/narrow/x/../" + name + " would escape /memories directory"},
		{"/memories/narrow/" + name[:523], "File created successfully at: /memories/narrow/" + name[:523]},
		{"/memories/wide/" + name, "File created successfully at: /memories/wide/" + name},
	} {
		narrow.Reset()
		got := execute(t, tab, memory.Options{}, cmd("command", "create", "path", c.path, "file_text", "x"))
		if got.Text != c.want {
			t.Errorf("got  %s\nwant %s", quote(got.Text), quote(c.want))
		}
		if got.IsError && narrow.Counts().Total() != 0 {
			t.Errorf("a path too long reached the store: %+v", narrow.Counts())
		}
	}
}
