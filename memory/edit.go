package memory

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/gate"
)

// create writes a new file, or with Overwrite replaces an existing one
// (gate.Tree.Create: its checks, in docs/spec.md's order, cost nothing
// that grows with the store).
func (h *Handler) create(ctx context.Context, c *command) Result {
	w, err := h.gate.Create(ctx, c.key, []byte(c.fileText), h.overwrite)
	if err != nil {
		return h.fail(ctx, c, err)
	}
	return withNote(created(c, w.Version), w.Redacted)
}

// write is Write's command (api.go): a create that never overwrites, or a
// replacement of the file at c.ifVersion that never retries.
func (h *Handler) write(ctx context.Context, c *command) Result {
	var (
		w   gate.Written
		err error
	)
	if c.ifVersion == "" {
		w, err = h.gate.Create(ctx, c.key, c.data, false)
	} else {
		w, err = h.gate.Replace(ctx, c.key, c.data, c.ifVersion)
	}
	if err != nil {
		return h.fail(ctx, c, err)
	}
	return withNote(created(c, w.Version), w.Redacted)
}

// editFunc computes a file's new content from its current (UTF-8) content.
// It returns the new content and the success text, or the failure.
type editFunc func(content []byte) (updated []byte, done string, fail *Error)

// edit is the read-modify-write of str_replace and insert
// (gate.Tree.Edit): apply runs on the file's content, once per attempt,
// after the check that it is UTF-8 text.
func (h *Handler) edit(ctx context.Context, c *command, apply editFunc) Result {
	var done string
	e, err := h.gate.Edit(ctx, c.key, func(content []byte) ([]byte, error) {
		if !utf8.Valid(content) {
			return nil, &Error{Kind: ErrNotText, Msg: msgNotUTF8(c.path)}
		}
		updated, text, fail := apply(content)
		if fail != nil {
			return nil, fail
		}
		done = text
		return updated, nil
	})
	if fail, ok := errors.AsType[*Error](err); ok { // apply's own
		return failedResult(fail)
	}
	if err != nil {
		return h.fail(ctx, c, err)
	}
	if len(e.Redacted) == 0 {
		return textResult(done)
	}
	if c.name == "str_replace" {
		// The snippet shows the content as written, from 2 lines before
		// its first changed line to 2 lines after its last.
		first, last := changedLines(e.Read, e.Content)
		var b strings.Builder
		b.WriteString(snippetHeader)
		writeNumbered(&b, e.Content, max(first-2, 1), min(last+2, countLines(e.Content)), -1)
		done = b.String()
	}
	return withNote(textResult(done), e.Redacted)
}

// strReplace replaces the one occurrence of old_str with new_str.
func (h *Handler) strReplace(ctx context.Context, c *command) Result {
	return h.edit(ctx, c, func(content []byte) ([]byte, string, *Error) {
		if c.oldStr == "" {
			return nil, "", &Error{Kind: ErrInvalidInput, Msg: msgEmptyOldStr}
		}
		old := []byte(c.oldStr)
		at := bytes.Index(content, old)
		if at < 0 {
			return nil, "", &Error{Kind: ErrNoMatch, Msg: msgNoMatch(echo(c.oldStr, h.viewLimit), c.path)}
		}
		if bytes.Contains(content[at+len(old):], old) {
			return nil, "", &Error{Kind: ErrAmbiguous, Msg: msgManyMatches(echo(c.oldStr, h.viewLimit), matchLines(content, old))}
		}
		updated := make([]byte, 0, len(content)-len(old)+len(c.newStr))
		updated = append(updated, content[:at]...)
		updated = append(updated, c.newStr...)
		updated = append(updated, content[at+len(old):]...)

		// The snippet runs from 2 lines before the match's first line to 2
		// lines after the last line of the inserted text.
		first := 1 + bytes.Count(content[:at], []byte{'\n'})
		last := first + strings.Count(c.newStr, "\n")
		var b strings.Builder
		b.WriteString(snippetHeader)
		writeNumbered(&b, updated, max(first-2, 1), min(last+2, countLines(updated)), -1)
		return updated, b.String(), nil
	})
}

// matchLines returns the distinct 1-based line numbers where the
// non-overlapping occurrences of old start, ascending.
func matchLines(content, old []byte) []int {
	var lines []int
	line, counted := 1, 0 // line is the number of the line holding content[counted]
	for i := 0; ; {
		j := bytes.Index(content[i:], old)
		if j < 0 {
			return lines
		}
		at := i + j
		line += bytes.Count(content[counted:at], []byte{'\n'})
		counted = at
		if len(lines) == 0 || lines[len(lines)-1] != line {
			lines = append(lines, line)
		}
		i = at + len(old)
	}
}

// insert adds insert_text as whole lines after line insert_line.
func (h *Handler) insert(ctx context.Context, c *command) Result {
	return h.edit(ctx, c, func(content []byte) ([]byte, string, *Error) {
		n := textLines(content)
		if c.insertLine < 0 || c.insertLine > int64(n) {
			return nil, "", &Error{Kind: ErrOutOfRange, Msg: msgInsertLine(c.insertLine, n)}
		}
		text := strings.TrimSuffix(c.insertText, "\n")
		k := int(c.insertLine)
		updated := make([]byte, 0, len(content)+len(text)+1)
		switch {
		case len(content) == 0: // an empty file gains a final '\n'
			updated = append(append(updated, text...), '\n')
		case k == n && content[len(content)-1] != '\n': // after an unterminated last line
			updated = append(append(append(updated, content...), '\n'), text...)
		default:
			at := lineStart(content, k+1)
			updated = append(updated, content[:at]...)
			updated = append(append(updated, text...), '\n')
			updated = append(updated, content[at:]...)
		}
		return updated, msgInserted(c.path), nil
	})
}

// textLines is the number of lines insert counts: a final '\n' ends the
// last line rather than starting a new one, and an empty file has none.
func textLines(content []byte) int {
	n := bytes.Count(content, []byte{'\n'})
	if len(content) > 0 && content[len(content)-1] != '\n' {
		n++
	}
	return n
}
