package memory

import (
	"bytes"
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/gate"
)

// view shows a file with line numbers, an image, or a directory two levels
// deep. A file costs one Get; a directory one Get (not a file) and one List;
// the root one List.
func (h *Handler) view(ctx context.Context, c *command) Result {
	key := c.key
	if key == "" {
		return h.viewDir(ctx, c, key)
	}
	data, _, err := h.gate.Get(ctx, key)
	switch {
	case err == nil:
		return h.viewFile(c, key, data)
	case errors.Is(err, blob.ErrTooLarge):
		return errorResult(ErrTooLarge, msgTooLargeToRead(c.path, err))
	case !errors.Is(err, blob.ErrNotExist):
		return h.storageFailure(ctx, c, c.path, err)
	}
	return h.viewDir(ctx, c, key)
}

// entry is a file or directory in a directory listing.
type entry struct {
	name  string
	size  int64 // a directory's: the total of every file beneath it
	dir   bool
	items []entry // a first-level directory's own entries
}

// viewDir lists the directory key (the root when "") from one List of
// everything beneath it.
func (h *Handler) viewDir(ctx context.Context, c *command, key string) Result {
	prefix := blob.Dir(key)
	var (
		items []entry
		total int64
		found bool
	)
	for info, err := range h.gate.List(ctx, prefix) {
		if err != nil {
			return h.storageFailure(ctx, c, c.path, err)
		}
		rel, ok := strings.CutPrefix(info.Key, prefix)
		if !ok || rel == "" {
			continue
		}
		found = true
		total += info.Size
		items = addToTree(items, rel, info.Size)
	}
	items, found = h.mountPoints(key, items, found) // mount.go
	if key != "" && !found {
		return errorResult(ErrNotFound, msgNotExistValid(c.path))
	}
	return textResult(h.listing(gate.PathOf(key), total, items))
}

// listing writes the view of the directory dir, whose files total total
// bytes, with its entries items: the header, dir's own line, then the
// entries in pre-order. With a view limit, it keeps whole entry lines while
// the lines (dir's own always among them) joined by '\n' stay within the
// limit in code points, and then notes how many entries it showed.
func (h *Handler) listing(dir string, total int64, items []entry) string {
	var b strings.Builder
	b.WriteString(dirHeaderFront)
	b.WriteString(dir)
	b.WriteString(dirHeaderBack)
	start := b.Len()
	writeSize(&b, total)
	b.WriteByte('\t')
	b.WriteString(dir)
	used := b.Len() - start // ASCII so far, plus dir: counted below
	used += utf8.RuneCountInString(dir) - len(dir)
	sortEntries(items)
	shown, all := 0, 0
	add := func(parent string, e entry) {
		all++
		if shown < all-1 {
			return // already truncated: only count
		}
		var line strings.Builder
		writeEntry(&line, parent, e)
		if n := utf8.RuneCountInString(line.String()); h.viewLimit < 0 || used+n <= h.viewLimit {
			b.WriteString(line.String())
			used += n
			shown++
		}
	}
	for _, e := range items {
		if hidden(e.name) {
			continue
		}
		add(dir, e)
		sub := dir + "/" + e.name
		for _, item := range e.items {
			if !hidden(item.name) {
				add(sub, item)
			}
		}
	}
	if shown < all {
		b.WriteString(noteListingTruncated(shown, all))
	}
	return b.String()
}

// addToTree adds the file at rel (relative to the listed directory) to
// items, counting its size in every directory on the way, down to the
// second level. List yields keys in byte order, so the keys under one
// directory arrive together and only the last entry can be theirs.
func addToTree(items []entry, rel string, size int64) []entry {
	name, rest, inDir := strings.Cut(rel, "/")
	if !inDir {
		return append(items, entry{name: name, size: size})
	}
	if n := len(items); n == 0 || !items[n-1].dir || items[n-1].name != name {
		items = append(items, entry{name: name, dir: true})
	}
	d := &items[len(items)-1]
	d.size += size
	if hidden(name) {
		return items // counted, never shown: no need for its entries
	}
	name, _, inDir = strings.Cut(rest, "/")
	if n := len(d.items); n == 0 || !inDir || !d.items[n-1].dir || d.items[n-1].name != name {
		d.items = append(d.items, entry{name: name, dir: inDir})
	}
	d.items[len(d.items)-1].size += size
	return items
}

// sortEntries puts the first two levels in name order, which differs from
// key order when a name holds a byte below '/' ("a.b" lists before "a/x").
func sortEntries(items []entry) {
	byName := func(a, b entry) int { return strings.Compare(a.name, b.name) }
	slices.SortStableFunc(items, byName)
	for _, e := range items {
		slices.SortStableFunc(e.items, byName)
	}
}

// writeEntry writes one listing line: "\n{size}\t{dir}/{name}", with a
// trailing '/' for a directory.
func writeEntry(b *strings.Builder, dir string, e entry) {
	b.WriteByte('\n')
	writeSize(b, e.size)
	b.WriteByte('\t')
	b.WriteString(dir)
	b.WriteByte('/')
	b.WriteString(e.name)
	if e.dir {
		b.WriteByte('/')
	}
}

// hidden reports whether listings skip the name.
func hidden(name string) bool { return strings.HasPrefix(name, ".") || name == "node_modules" }

// viewFile shows the file key, whose content is data.
func (h *Handler) viewFile(c *command, key string, data []byte) Result {
	if media := imageType(key, data); media != "" {
		if n := int64(len(data)); n > h.maxImageBytes {
			return errorResult(ErrTooLarge, msgImageTooBig(c.path, n, h.maxImageBytes))
		}
		return Result{Image: &Image{MediaType: media, Data: data}}
	}
	if !utf8.Valid(data) {
		return errorResult(ErrNotText, msgNotUTF8(c.path))
	}
	n := countLines(data)
	if n > h.maxLines {
		return errorResult(ErrTooLarge, msgLineLimit(c.path, h.maxLines))
	}
	first, last := 1, n
	if r := c.viewRange; len(r) == 2 {
		a, z := r[0], r[1]
		start := max(a, 1)
		end := z
		if z == -1 || z > int64(n) {
			end = int64(n)
		}
		if start > int64(n) || z < -1 || end < start {
			return errorResult(ErrOutOfRange, msgViewRange(a, z, c.path, n))
		}
		first, last = int(start), int(end)
	}
	header := fileHeader(c.path)
	var b strings.Builder
	b.Grow(len(header) + len(data) + 8*(last-first+1) + 100)
	b.WriteString(header)
	shown, truncated := writeNumbered(&b, data, first, last, h.viewLimit)
	if truncated {
		b.WriteString(noteTruncated(first, shown, n))
	}
	return textResult(b.String())
}

// imageType returns the media type of an image file: its name must end in
// .png, .jpg, .jpeg, .gif or .webp (any case) and its first bytes must be
// those of one of these formats. Otherwise it returns "".
func imageType(key string, data []byte) string {
	switch strings.ToLower(path.Ext(key)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
	default:
		return ""
	}
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(data, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "image/gif"
	case len(data) >= 14 && string(data[:4]) == "RIFF" && string(data[8:14]) == "WEBPVP":
		return "image/webp"
	}
	return ""
}
