package memory

import (
	"strings"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/blob"
)

// root is the virtual directory every path lies in.
const root = "/memories"

const (
	// maxPathBytes caps a path as sent, before normalisation.
	maxPathBytes = 1024
	// maxSegmentBytes caps one name in a path.
	maxSegmentBytes = 255
)

// resolve validates a path as docs/spec.md orders the checks (prefix,
// escape, characters, length, reserved) and returns its store key: "" for
// the root,
// "notes/a.md" for /memories/notes/a.md. On failure it returns the error
// text instead, which echoes the path as echo does with the default view
// limit.
func resolve(path string) (key, msg string) {
	return resolveWithin(path, blob.MaxKeyLen, DefaultViewLimit)
}

// resolveWithin is resolve for a store that holds keys of at most budget
// bytes (see blob.KeyBytes): a longer key is "too long", checked with the
// other lengths, before the reserved names. An error text echoes the path
// cut at echoLimit code points (echo): a path that fails the checks before
// the length check may be of any length.
func resolveWithin(path string, budget, echoLimit int) (key, msg string) {
	if path != root && !strings.HasPrefix(path, root+"/") {
		return "", msgPrefix(echo(path, echoLimit))
	}
	if escapes(path) {
		return "", msgEscape(echo(path, echoLimit))
	}
	for i := 0; i < len(path); i++ {
		if c := path[i]; c < 0x20 || c == 0x7f {
			return "", msgChars(echo(path, echoLimit))
		}
	}
	if !utf8.ValidString(path) { // only a typed call can send one
		return "", msgChars(echo(path, echoLimit))
	}
	if len(path) > maxPathBytes {
		return "", msgTooLong(echo(path, echoLimit))
	}
	for seg := range strings.SplitSeq(path, "/") {
		if len(seg) > maxSegmentBytes {
			return "", msgTooLong(echo(path, echoLimit))
		}
	}
	key = normalise(path[len(root):])
	if len(key) > budget {
		return "", msgTooLong(path) // at most maxPathBytes
	}
	if blob.IsReserved(key) {
		return "", msgReserved(path)
	}
	return key, ""
}

// escapes reports whether path has a ".." segment, a backslash, or a
// percent-encoded '.', '/' or '\' or '%' (%2e, %2f, %5c, %25, any case).
func escapes(path string) bool {
	if strings.IndexByte(path, '\\') >= 0 {
		return true
	}
	for seg := range strings.SplitSeq(path, "/") {
		if seg == ".." {
			return true
		}
	}
	for i := strings.IndexByte(path, '%'); i >= 0 && i+2 < len(path); {
		switch strings.ToLower(path[i+1 : i+3]) {
		case "2e", "2f", "5c", "25":
			return true
		}
		next := strings.IndexByte(path[i+1:], '%')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

// normalise turns the part of a path after /memories into a key: repeated
// '/' collapse, a trailing '/' and "." segments are dropped. A path that is
// already clean costs no allocation.
func normalise(rest string) string {
	clean := true
	for seg := range strings.SplitSeq(strings.TrimPrefix(rest, "/"), "/") {
		if seg == "" || seg == "." {
			clean = false
			break
		}
	}
	if clean {
		return strings.TrimPrefix(rest, "/")
	}
	var segs []string
	for seg := range strings.SplitSeq(rest, "/") {
		if seg != "" && seg != "." {
			segs = append(segs, seg)
		}
	}
	return strings.Join(segs, "/")
}

// within reports whether key lies strictly under the directory dir.
func within(key, dir string) bool {
	if dir == "" {
		return key != ""
	}
	return len(key) > len(dir) && key[len(dir)] == '/' && strings.HasPrefix(key, dir)
}

// checkKey is the last defence between path validation and the store: an
// accepted path always maps to a valid key (the root aside), so a failure
// here is a bug in resolve, reported as a storage failure rather than a panic.
func checkKey(key string) error {
	if key == "" {
		return nil
	}
	return blob.CheckKey(key)
}
