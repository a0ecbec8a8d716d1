package dirsync_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/dirsync"
	"github.com/cloudmem/cloudmem/dirsync/dirsynctest"
)

// TestLinkedFolderDeletesNothing syncs three files, then replaces the
// folder (or a directory in it) by a symbolic link to its moved copy, as a
// person reorganizing their files would: the next pass refuses with
// ErrLinked and its whole text, and the store keeps all three files.
func TestLinkedFolderDeletesNothing(t *testing.T) {
	files := map[string]string{"notes/a.md": "a", "notes/b.md": "b", "notes/c.md": "c"}
	cases := []struct {
		name string
		link func(m *dirsynctest.Machine) string // moves and links; returns the path the pass syncs
		want func(dir string) string
	}{
		{"directory", func(m *dirsynctest.Machine) string {
			moved := filepath.Join(filepath.Dir(m.Dir), "notes-moved")
			mustDo(t, os.Rename(filepath.Join(m.Dir, "notes"), moved))
			mustDo(t, os.Symlink(moved, filepath.Join(m.Dir, "notes")))
			return m.Dir
		}, func(string) string {
			return "dirsync: a synced path is now a symbolic link: notes held synced files and is now a symbolic link (links are not followed); " +
				"nothing was changed: put the files back in its place, or remove the link to have them deleted everywhere"
		}},
		{"root", func(m *dirsynctest.Machine) string {
			moved := m.Dir + "-moved"
			mustDo(t, os.Rename(m.Dir, moved))
			mustDo(t, os.Symlink(moved, m.Dir))
			return m.Dir
		}, func(dir string) string {
			return "dirsync: a synced path is now a symbolic link: the folder " + dir + " is a symbolic link (links are not followed); " +
				"nothing was changed: sync the folder it points to"
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mem.New(nil)
			m := dirsynctest.NewMachine(t, "a")
			m.Write(t, files)
			m.MustSync(t, s)
			dir := c.link(m)
			rep, err := dirsync.Sync(t.Context(), dir, s, m.Options())
			if want := c.want(dir); !errors.Is(err, dirsync.ErrLinked) || err.Error() != want {
				t.Errorf("pass over a linked folder: %v\nwant %s", err, want)
			}
			if len(rep.Actions) != 0 {
				t.Errorf("actions %+v, want none", rep.Actions)
			}
			dirsynctest.Expect(t, "store", dirsynctest.StoreTree(t, s), files)
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestStateInFolderRefused gives a state file inside the synced folder
// (directly, and through a link to the folder): the pass refuses with
// ErrStateInFolder, and neither the store nor the folder changes (no state
// or lock file is written there).
func TestStateInFolderRefused(t *testing.T) {
	s := mem.New(nil)
	m := dirsynctest.NewMachine(t, "a")
	m.Write(t, map[string]string{"a.md": "a"})
	link := filepath.Join(t.TempDir(), "link")
	mustDo(t, os.Symlink(m.Dir, link))
	for _, state := range []string{filepath.Join(m.Dir, "sync.json"), filepath.Join(m.Dir, "sub", "sync.json"), filepath.Join(link, "sync.json")} {
		opts := m.Options()
		opts.StateFile = state
		rep, err := dirsync.Sync(t.Context(), m.Dir, s, opts)
		want := "dirsync: the sync state is inside the synced folder: the state file " + state + " is in the folder " + m.Dir +
			", and would be synced to the store; nothing was changed: give a state file outside the folder"
		if !errors.Is(err, dirsync.ErrStateInFolder) || err.Error() != want || len(rep.Actions) != 0 {
			t.Errorf("state %s: %+v, %v\nwant %s", state, rep.Actions, err, want)
		}
		dirsynctest.Expect(t, "store", dirsynctest.StoreTree(t, s), map[string]string{})
		dirsynctest.Expect(t, "folder", m.Tree(t), map[string]string{"a.md": "a"})
	}
}
