package memory

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendSize appends a byte count as docs/spec.md's listings print it: "0B",
// "1023B", "1K", "1.0K" (1025), "1.2K" (1280), "2M". The unit is the
// largest of K, M, G, T not above n; a whole value has no decimals, any
// other one, rounded half to even on the exact binary value.
func appendSize(dst []byte, n int64) []byte {
	if n < 1<<10 {
		return append(strconv.AppendInt(dst, n, 10), 'B')
	}
	unit, suffix := int64(1)<<40, byte('T')
	switch {
	case n < 1<<20:
		unit, suffix = 1<<10, 'K'
	case n < 1<<30:
		unit, suffix = 1<<20, 'M'
	case n < 1<<40:
		unit, suffix = 1<<30, 'G'
	}
	if n%unit == 0 {
		dst = strconv.AppendInt(dst, n/unit, 10)
	} else {
		dst = strconv.AppendFloat(dst, float64(n)/float64(unit), 'f', 1, 64)
	}
	return append(dst, suffix)
}

// writeSize writes a byte count as appendSize prints it.
func writeSize(b *strings.Builder, n int64) {
	var buf [32]byte
	b.Write(appendSize(buf[:0], n))
}

// withCommas prints n (not negative) with a comma between each group of
// three digits: 999,999.
func withCommas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lineWidth is the width line numbers are right-aligned in.
const lineWidth = 6

// writeLineNumber writes n right-aligned in lineWidth columns, then a tab.
func writeLineNumber(b *strings.Builder, n int) {
	var buf [20]byte
	digits := strconv.AppendInt(buf[:0], int64(n), 10)
	if pad := lineWidth - len(digits); pad > 0 {
		b.WriteString("      "[:pad])
	}
	b.Write(append(digits, '\t'))
}

// numberWidth is the number of code points writeLineNumber writes for n.
func numberWidth(n int) int {
	d := 1
	for m := n; m >= 10; m /= 10 {
		d++
	}
	return max(d, lineWidth) + 1
}

// countLines is the number of lines view shows for content: its '\n'
// count plus one.
func countLines(content []byte) int { return bytes.Count(content, []byte{'\n'}) + 1 }

// lineStart returns the offset where the 1-based line n of content starts.
// n must be at most countLines(content).
func lineStart(content []byte, n int) int {
	off := 0
	for ; n > 1; n-- {
		off += bytes.IndexByte(content[off:], '\n') + 1
	}
	return off
}

// writeNumbered writes lines first..last (1-based, inclusive, within the
// content's lines) of content in the view format: each line's number, a tab
// and the line, joined by '\n'. With limit >= 0 it stops before the output
// would exceed limit code points, keeping whole lines, or, when the first
// line alone is over, that line's first limit code points. It returns the
// number of the last line written and whether it stopped early.
func writeNumbered(b *strings.Builder, content []byte, first, last, limit int) (shown int, truncated bool) {
	off := lineStart(content, first)
	if limit >= 0 && fitsBytes(content[off:], last-first+1, numberWidth(last), limit) {
		limit = -1 // no need to count code points
	}
	total := 0 // code points written so far
	for n := first; n <= last; n++ {
		line := content[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		off += len(line) + 1
		if limit >= 0 {
			size := numberWidth(n) + utf8.RuneCount(line)
			if n > first {
				size++ // the joining '\n'
			}
			if total+size > limit {
				if n == first {
					writeCut(b, n, line, limit)
					return n, true
				}
				return n - 1, true
			}
			total += size
		}
		if n > first {
			b.WriteByte('\n')
		}
		writeLineNumber(b, n)
		b.Write(line)
	}
	return last, false
}

// fitsBytes reports whether the view of the first n lines of content, with
// line numbers at most width wide, is at most limit bytes long, and so at
// most limit code points.
func fitsBytes(content []byte, n, width, limit int) bool {
	return len(content)+n*width <= limit
}

// writeCut writes the first limit code points of line n in the view format.
func writeCut(b *strings.Builder, n int, line []byte, limit int) {
	var prefix strings.Builder
	writeLineNumber(&prefix, n)
	p := prefix.String() // ASCII: one code point per byte
	if limit <= len(p) {
		b.WriteString(p[:limit])
		return
	}
	b.WriteString(p)
	limit -= len(p)
	for i := range string(line) {
		if limit == 0 {
			b.Write(line[:i])
			return
		}
		limit--
	}
	b.Write(line)
}
