package memory

import (
	"errors"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

// Mount tables. A store that implements blob.Traits.Mounts (package mount)
// places stores under top-level names: /memories/team/a.md is the file a.md
// of the store mounted at team. The handler applies the rules of the
// "Mounts" section of docs/spec.md here, after every path of the command is
// validated and before the command's own checks:
//
//   - the root lists every mount point as a directory, an empty one too
//     (0B), and a mount point always exists as a directory;
//   - a mount point cannot be deleted or renamed, is a directory for
//     create, str_replace, insert and a rename's destination, and a writing
//     command at the top level outside every mount point is refused;
//   - a write under a read-only mount is refused while the others stay
//     writable, and a rename across two mounts is refused when either is
//     read-only (otherwise blob.Rename copies, then deletes);
//   - the file limit counts the files of the path's own mount.
//
// Over a store that is not a mount table none of this applies and nothing
// is checked.

// Kinds of failure on a mount table (see Error).
var (
	// ErrMountPoint: delete or rename of a mount point itself.
	ErrMountPoint = errors.New("memory: a mount point")
	// ErrNotMounted: a writing command names a path at the top level of
	// /memories outside every mount point.
	ErrNotMounted = errors.New("memory: outside every mount point")
)

func msgDeleteMount(path string) string { return "Cannot delete the mount point " + path }
func msgRenameMount(path string) string { return "Cannot rename the mount point " + path }

func msgNotMounted(path string, mounts []blob.MountPoint) string {
	var b strings.Builder
	b.WriteString("The path ")
	b.WriteString(path)
	b.WriteString(" is outside every mount point. Use a path inside one of: ")
	for i, m := range mounts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pathOf(m.Name))
	}
	return b.String()
}

func msgCrossReadOnly(oldPath, newPath, mount string) string {
	return "Cannot move " + oldPath + " to " + newPath + ": the mount point " + pathOf(mount) + " is read-only"
}

// checkMounts applies the mount rules to c. It returns ok == false and the
// Result to return when one refuses the command. Its paths are validated
// first, in the command's order and with the command's texts, except that
// "too long" counts against the key budget of the path's own mount (a
// mount whose store is prefixed holds shorter keys).
func (h *Handler) checkMounts(c *command) (res Result, ok bool) {
	mounts := blob.Mounts(h.store)
	if mounts == nil {
		return Result{}, true
	}
	paths := []string{c.path}
	if c.name == "rename" {
		paths = []string{c.oldPath, c.newPath}
	}
	keys := make([]string, len(paths))
	for i, p := range paths {
		budget := h.keyBudget
		if rest, ok := strings.CutPrefix(p, root); ok {
			if m, ok := blob.MountOf(mounts, normalise(rest)); ok {
				budget = min(budget, len(m.Name)+1+m.KeyBudget)
			}
		}
		key, msg := resolveWithin(p, budget, h.viewLimit)
		if msg != "" {
			return errorResult(ErrInvalidPath, msg), false
		}
		keys[i] = key
	}
	if c.name == "view" {
		return Result{}, true
	}
	if c.name == "rename" {
		return h.checkMountedRename(c, mounts, keys[0], keys[1])
	}
	key := keys[0]
	if key == "" {
		return Result{}, true // the root: the command's own text
	}
	m, found := blob.MountOf(mounts, key)
	switch {
	case !found:
		return errorResult(ErrNotMounted, msgNotMounted(c.path, mounts)), false
	case key == m.Name && c.name == "delete":
		return errorResult(ErrMountPoint, msgDeleteMount(c.path)), false
	case key == m.Name && (c.name == "create" || c.name == "write"):
		return errorResult(ErrExists, msgExists(c.path)), false
	case key == m.Name: // str_replace, insert
		return errorResult(ErrNotFile, msgNotAFile(c.path)), false
	case m.ReadOnly:
		return errorResult(ErrReadOnly, msgReadOnly(c.name)), false
	}
	return Result{}, true
}

// checkMountedRename is checkMounts for rename.
func (h *Handler) checkMountedRename(c *command, mounts []blob.MountPoint, oldKey, newKey string) (Result, bool) {
	if oldKey == "" {
		return Result{}, true // the root: the command's own text
	}
	from, found := blob.MountOf(mounts, oldKey)
	switch {
	case !found:
		return errorResult(ErrNotMounted, msgNotMounted(c.oldPath, mounts)), false
	case oldKey == from.Name:
		return errorResult(ErrMountPoint, msgRenameMount(c.oldPath)), false
	case newKey == "":
		return Result{}, true // the root exists: the command's own text
	}
	to, found := blob.MountOf(mounts, newKey)
	switch {
	case !found:
		return errorResult(ErrNotMounted, msgNotMounted(c.newPath, mounts)), false
	case newKey == to.Name:
		return errorResult(ErrExists, msgDestExists(c.newPath)), false
	case from.Name == to.Name && from.ReadOnly:
		return errorResult(ErrReadOnly, msgReadOnly(c.name)), false
	case from.ReadOnly:
		return errorResult(ErrReadOnly, msgCrossReadOnly(c.oldPath, c.newPath, from.Name)), false
	case to.ReadOnly:
		return errorResult(ErrReadOnly, msgCrossReadOnly(c.oldPath, c.newPath, to.Name)), false
	}
	return Result{}, true
}

// countPrefix is the List prefix whose files the file limit counts for a
// file at key: its mount's on a mount table, otherwise the whole store.
func (h *Handler) countPrefix(key string) string {
	if m, ok := blob.MountOf(blob.Mounts(h.store), key); ok {
		return m.Name + "/"
	}
	return ""
}

// mountPoints adds to the listing of the directory key what the store's
// keys cannot show: at the root, every mount point that holds no file, as
// an empty directory; and it reports a mount point as found, since it
// exists even when empty.
func (h *Handler) mountPoints(key string, items []entry, found bool) ([]entry, bool) {
	mounts := blob.Mounts(h.store)
	if key != "" {
		m, ok := blob.MountOf(mounts, key)
		return items, found || ok && m.Name == key
	}
	listed := make(map[string]bool, len(items))
	for _, e := range items {
		listed[e.name] = true
	}
	for _, m := range mounts {
		if !listed[m.Name] {
			items = append(items, entry{name: m.Name, dir: true})
		}
	}
	return items, found
}
