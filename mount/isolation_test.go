package mount_test

import (
	"maps"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/mount"
)

// The isolation suite: commands sent from mount a at the paths of mount b,
// through "..", percent-encodings, backslashes, a subdirectory of a that is
// also named b, look-alike names, b's bookkeeping, and renames across. None
// may change b, and a path refused by validation reaches no store at all.
// Both mounts are writable, so isolation does not rest on read-only.

var (
	seedA = map[string]string{"x.md": "a's x\n", "d/y.md": "a's y\n", "b/x.md": "a's own b/x\n"}
	seedB = map[string]string{"x.md": "b's x\n", "d/y.md": "b's y\n", ".cloudmem/crypt-key": "b's key", "secret.md": "b's secret\n"}
)

type isolationCase struct {
	input string
	want  string            // the whole text
	after map[string]string // mount a afterwards; nil: unchanged
	calls bool              // whether the command may reach a store
}

func escapeText(path string) string {
	return "Error: Path " + path + " would escape /memories directory"
}
func reservedText(path string) string { return "Error: Path " + path + " is reserved" }

func isolationCases() []isolationCase {
	withA := func(edits map[string]string) map[string]string {
		after := maps.Clone(seedA)
		for k, v := range edits {
			if v == "" {
				delete(after, k)
			} else {
				after[k] = v
			}
		}
		return after
	}
	const outsideAB = " is outside every mount point. Use a path inside one of: /memories/a, /memories/b"
	return []isolationCase{
		// "..", in every spelling.
		{input: cmd("command", "view", "path", "/memories/a/../b/secret.md"), want: escapeText("/memories/a/../b/secret.md")},
		{input: cmd("command", "view", "path", "/memories/a/%2e%2e/b/secret.md"), want: escapeText("/memories/a/%2e%2e/b/secret.md")},
		{input: cmd("command", "view", "path", "/memories/a/%2E%2E%2Fb%2Fsecret.md"), want: escapeText("/memories/a/%2E%2E%2Fb%2Fsecret.md")},
		{input: cmd("command", "view", "path", "/memories/a/..%2fb/secret.md"), want: escapeText("/memories/a/..%2fb/secret.md")},
		{input: cmd("command", "view", "path", `/memories/a\..\b\secret.md`), want: escapeText(`/memories/a\..\b\secret.md`)},
		{input: cmd("command", "view", "path", "/memories/a/%252e%252e/b"), want: escapeText("/memories/a/%252e%252e/b")},
		{input: cmd("command", "create", "path", "/memories/a/../b/new.md", "file_text", "x"), want: escapeText("/memories/a/../b/new.md")},
		{input: cmd("command", "str_replace", "path", "/memories/a/./../b/x.md", "old_str", "b's", "new_str", "a's"), want: escapeText("/memories/a/./../b/x.md")},
		{input: `{"command":"insert","path":"/memories/a/%2e%2e/b/x.md","insert_line":0,"insert_text":"x"}`, want: escapeText("/memories/a/%2e%2e/b/x.md")},
		{input: cmd("command", "delete", "path", "/memories/a/../b"), want: escapeText("/memories/a/../b")},
		{input: cmd("command", "delete", "path", "/memories/a/%2e%2e%2fb/d"), want: escapeText("/memories/a/%2e%2e%2fb/d")},
		{input: cmd("command", "rename", "old_path", "/memories/a/x.md", "new_path", "/memories/a/../b/x2.md"), want: escapeText("/memories/a/../b/x2.md")},
		{input: cmd("command", "rename", "old_path", "/memories/a/../b/secret.md", "new_path", "/memories/a/stolen.md"), want: escapeText("/memories/a/../b/secret.md")},

		// b's bookkeeping, at any depth and through a.
		{input: cmd("command", "view", "path", "/memories/b/.cloudmem/crypt-key"), want: reservedText("/memories/b/.cloudmem/crypt-key")},
		{input: cmd("command", "view", "path", "/memories/b/.cloudmem"), want: reservedText("/memories/b/.cloudmem")},
		{input: cmd("command", "delete", "path", "/memories/b/.cloudmem"), want: reservedText("/memories/b/.cloudmem")},
		{input: cmd("command", "rename", "old_path", "/memories/b/.cloudmem", "new_path", "/memories/a/stolen"), want: reservedText("/memories/b/.cloudmem")},
		{input: cmd("command", "rename", "old_path", "/memories/a/x.md", "new_path", "/memories/b/.cloudmem/crypt-key"), want: reservedText("/memories/b/.cloudmem/crypt-key")},
		{input: cmd("command", "create", "path", "/memories/a/.cloudmem/crypt-key", "file_text", "x"), want: reservedText("/memories/a/.cloudmem/crypt-key")},

		// Names that look like b's paths but are a's, or nobody's.
		{input: cmd("command", "view", "path", "/memories/a/b/secret.md"), calls: true,
			want: "Error: The path /memories/a/b/secret.md does not exist. Please provide a valid path."},
		{input: `{"command":"insert","path":"/memories/a/b/x.md","insert_line":0,"insert_text":"new"}`, calls: true,
			want: "The file /memories/a/b/x.md has been edited.", after: withA(map[string]string{"b/x.md": "new\na's own b/x\n"})},
		{input: cmd("command", "delete", "path", "/memories/a/b"), calls: true,
			want: "Successfully deleted /memories/a/b", after: withA(map[string]string{"b/x.md": ""})},
		{input: cmd("command", "view", "path", "/memories/a/%62/secret.md"), calls: true,
			want: "Error: The path /memories/a/%62/secret.md does not exist. Please provide a valid path."},
		{input: cmd("command", "create", "path", "/memories/a/%62/secret.md", "file_text", "literal"), calls: true,
			want: "File created successfully at: /memories/a/%62/secret.md", after: withA(map[string]string{"%62/secret.md": "literal"})},
		{input: cmd("command", "create", "path", "/memories/%62/secret.md", "file_text", "x"),
			want: "Error: The path /memories/%62/secret.md" + outsideAB},
		{input: cmd("command", "create", "path", "/memories/ｂ/secret.md", "file_text", "x"),
			want: "Error: The path /memories/ｂ/secret.md" + outsideAB},
		{input: cmd("command", "create", "path", "/memories/B/secret.md", "file_text", "x"),
			want: "Error: The path /memories/B/secret.md" + outsideAB},

		// Renames across: only the named file moves, and never over b's.
		{input: cmd("command", "rename", "old_path", "/memories/a/x.md", "new_path", "/memories/b/x.md"), calls: true,
			want: "Error: The destination /memories/b/x.md already exists"},
		{input: cmd("command", "rename", "old_path", "/memories/a/d", "new_path", "/memories/b/d"), calls: true,
			want: "Error: The destination /memories/b/d already exists"},
		{input: cmd("command", "rename", "old_path", "/memories/a/d", "new_path", "/memories/b/d/y.md/z"), calls: true,
			want: "Error: The path /memories/b/d/y.md is a file, not a directory"},
		{input: cmd("command", "rename", "old_path", "/memories/a/d", "new_path", "/memories/b/secret.md/d"), calls: true,
			want: "Error: The path /memories/b/secret.md is a file, not a directory"},
	}
}

func TestIsolation(t *testing.T) {
	for _, c := range isolationCases() {
		t.Run(c.input, func(t *testing.T) {
			a, b := blob.NewCounter(mem.New(nil)), blob.NewCounter(mem.New(nil))
			for k, v := range seedA {
				put(t, a, k, v)
			}
			for k, v := range seedB {
				put(t, b, k, v)
			}
			before := snapshotOf(t, b)
			a.Reset()
			b.Reset()
			tab := newTable(t, mount.Mount{Name: "a", Store: a}, mount.Mount{Name: "b", Store: b})

			got := execute(t, tab, memory.Options{}, c.input)
			if got.Text != c.want {
				t.Errorf("got  %s\nwant %s", quote(got.Text), quote(c.want))
			}
			if k := b.Counts(); k.Put+k.Delete+k.Rename+k.DeleteTree != 0 {
				t.Errorf("mount b saw writes: %+v", k)
			}
			if !c.calls && a.Counts().Total()+b.Counts().Total() != 0 {
				t.Errorf("a refused path reached storage: a %+v, b %+v", a.Counts(), b.Counts())
			}
			if after := snapshotOf(t, b); !maps.Equal(after, before) {
				t.Errorf("mount b changed:\n got %q\nwant %q", after, before)
			}
			wantA := c.after
			if wantA == nil {
				wantA = seedA
			}
			got2 := contents(t, a)
			maps.DeleteFunc(got2, func(k, _ string) bool { return memory.IsBookkeeping(k) }) // the handler's own
			if got := got2; !maps.Equal(got, wantA) {
				t.Errorf("mount a holds %q\nwant %q", got, wantA)
			}
		})
	}
}

// snapshotOf returns every key of s with its content and version.
func snapshotOf(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range contents(t, s) {
		info, err := s.Stat(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = v + "@" + info.Version
	}
	return out
}
