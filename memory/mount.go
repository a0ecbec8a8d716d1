package memory

import (
	"errors"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
)

// Mount tables. A store that implements blob.Traits.Mounts (package mount)
// places stores under top-level names: /memories/team/a.md is the file a.md
// of the store mounted at team. The gate applies the rules of the "Mounts"
// section of docs/spec.md (gate/mount.go); the handler words them, counts
// a path's length against its own mount's key budget (resolvePaths), and
// lists every mount point at the root, an empty one too (0B): a mount
// point always exists as a directory.

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
		b.WriteString(gate.PathOf(m.Name))
	}
	return b.String()
}

func msgCrossReadOnly(oldPath, newPath, mount string) string {
	return "Cannot move " + oldPath + " to " + newPath + ": the mount point " + gate.PathOf(mount) + " is read-only"
}

// mountPoints adds to the listing of the directory key what the store's
// keys cannot show: at the root, every mount point that holds no file, as
// an empty directory; and it reports a mount point as found, since it
// exists even when empty.
func (h *Handler) mountPoints(key string, items []entry, found bool) ([]entry, bool) {
	mounts := h.gate.Mounts()
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
