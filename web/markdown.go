package web

import "strings"

// block is one block of a Markdown file as the file page renders it:
// a heading (Kind "h", Level 1 to 6), a paragraph ("p"), a fenced or
// indented code block ("pre"), a list ("ul"; Items), a quote ("quote") or a
// rule ("hr"). Text is shown as text: no inline markup, no HTML and no
// link of the content ever becomes markup, so a Markdown file can hide
// nothing from the reader ("<img src=x onerror=...>" shows as those
// characters, "[x](javascript:...)" as those characters).
type block struct {
	Kind  string
	Level int
	Text  string
	Items []string
}

// markdown splits text into blocks: ATX headings (# to ######), fenced
// code (``` or ~~~), indented code, lists (-, *, + or 1.), quotes (>),
// rules (---, ***), and paragraphs of the lines between.
func markdown(text string) []block {
	var out []block
	var para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, block{Kind: "p", Text: strings.Join(para, "\n")})
			para = nil
		}
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			flush()
			fence := t[:3]
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				code = append(code, lines[i])
			}
			out = append(out, block{Kind: "pre", Text: strings.Join(code, "\n")})
		case strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t"):
			if len(para) > 0 { // a continuation line of the paragraph
				para = append(para, t)
				continue
			}
			out = append(out, block{Kind: "pre", Text: strings.TrimPrefix(strings.TrimPrefix(l, "\t"), "    ")})
		case heading(t) > 0:
			flush()
			n := heading(t)
			out = append(out, block{Kind: "h", Level: n, Text: strings.TrimSpace(strings.TrimRight(t[n:], "#"))})
		case t == "---" || t == "***" || t == "___":
			flush()
			out = append(out, block{Kind: "hr"})
		case strings.HasPrefix(t, ">"):
			flush()
			out = append(out, block{Kind: "quote", Text: strings.TrimSpace(strings.TrimPrefix(t, ">"))})
		case listItem(t) != "":
			flush()
			if n := len(out); n > 0 && out[n-1].Kind == "ul" && i > 0 && strings.TrimSpace(lines[i-1]) != "" {
				out[n-1].Items = append(out[n-1].Items, listItem(t))
			} else {
				out = append(out, block{Kind: "ul", Items: []string{listItem(t)}})
			}
		default:
			para = append(para, t)
		}
	}
	flush()
	return out
}

// heading returns the level of an ATX heading line, 0 for another line.
func heading(t string) int {
	n := 0
	for n < len(t) && t[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n < len(t) && t[n] != ' ' {
		return 0
	}
	return n
}

// listItem returns the text of a list item line, "" for another line.
func listItem(t string) string {
	for _, m := range []string{"- ", "* ", "+ "} {
		if rest, ok := strings.CutPrefix(t, m); ok {
			return strings.TrimSpace(rest)
		}
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i < 10 && strings.HasPrefix(t[i:], ". ") {
		return strings.TrimSpace(t[i+2:])
	}
	return ""
}
