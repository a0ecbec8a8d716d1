package history

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines around each hunk.
const diffContext = 3

// maxDiffLines bounds the line-by-line comparison: when the two texts,
// without their common start and end, have more lines than this together,
// the differing middle is shown as removed and added whole.
const maxDiffLines = 20_000

// UnifiedDiff returns the unified diff (as diff -u prints it, with 3 lines
// of context) that turns a into b, labelled aName and bName; "" when they
// are equal. A text that does not end in a newline gets diff's
// "\ No newline at end of file" marker.
func UnifiedDiff(aName, bName string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	x, y := splitLines(string(a)), splitLines(string(b))
	ops := diffLines(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	// Walk the edit script, cutting it into hunks.
	type pos struct{ i, a, b int } // index in ops, line in a, line in b
	var changes []pos
	ai, bi := 0, 0
	for i, o := range ops {
		if o.kind != ' ' {
			changes = append(changes, pos{i, ai, bi})
		}
		if o.kind != '+' {
			ai++
		}
		if o.kind != '-' {
			bi++
		}
	}
	for c := 0; c < len(changes); {
		// A hunk runs from diffContext lines before one change to
		// diffContext lines after the last change that is within
		// 2*diffContext unchanged lines of the one before it.
		first, last := c, c
		for last+1 < len(changes) && changes[last+1].i-changes[last].i <= 2*diffContext+1 {
			last++
		}
		start := max(changes[first].i-diffContext, 0)
		end := min(changes[last].i+diffContext+1, len(ops))
		// Line numbers at start.
		la, lb := changes[first].a, changes[first].b
		for i := changes[first].i - 1; i >= start; i-- {
			la--
			lb--
		}
		na, nb := 0, 0
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				na++
			}
			if o.kind != '-' {
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(la, na), hunkRange(lb, nb))
		for _, o := range ops[start:end] {
			out.WriteByte(o.kind)
			out.WriteString(o.line)
			if !strings.HasSuffix(o.line, "\n") {
				out.WriteString("\n\\ No newline at end of file\n")
			}
		}
		c = last + 1
	}
	return out.String()
}

// hunkRange formats one side of a hunk header: start line (1-based; the
// line before an empty range) and count, the count left out when it is 1.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitLines splits s into lines, each keeping its '\n'.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// edit is one line of an edit script: ' ' kept, '-' removed, '+' added.
type edit struct {
	kind byte
	line string
}

// diffLines returns a shortest edit script from a to b (Myers' algorithm),
// after taking off the common first and last lines.
func diffLines(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for _, l := range a[:pre] {
		out = append(out, edit{' ', l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, edit{' ', l})
	}
	return out
}

func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	if n+m > maxDiffLines || n == 0 || m == 0 {
		out := make([]edit, 0, n+m)
		for _, l := range a {
			out = append(out, edit{'-', l})
		}
		for _, l := range b {
			out = append(out, edit{'+', l})
		}
		return out
	}
	off := n + m + 1
	v := make([]int, 2*off+1)
	var trace [][]int
search:
	for d := 0; d <= n+m; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				break search
			}
		}
	}
	var rev []edit
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		v := trace[d]
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			prevK = k + 1
		}
		prevX := v[off+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, edit{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if x == prevX {
			rev = append(rev, edit{'+', b[y-1]})
			y--
		} else {
			rev = append(rev, edit{'-', a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, edit{' ', a[x-1]})
		x, y = x-1, y-1
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}
