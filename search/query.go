package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// BM25's parameters.
const (
	k1 = 1.2
	b  = 0.75
)

// Bounds of what a query may ask and a hit shows.
const (
	maxExpansions = 256 // terms a prefix word stands for, at most
	// MaxQueryWords and MaxQueryBytes bound a query, so that one query
	// cannot hold the index for long (scoring and snippets cost the
	// words times the tokens of the hits).
	MaxQueryWords = 32
	MaxQueryBytes = 1000
	maxHitLines   = 50  // line numbers a Hit carries, at most
	shownLines    = 10  // line numbers the text shows, at most
	snippetRunes  = 160 // characters of a snippet, at most, marks excluded
)

// The marks around a match in a snippet.
const (
	MarkStart = "«"
	MarkEnd   = "»"
)

// Errors of Search. Test with errors.Is; the texts are docs/spec.md's.
var (
	// ErrNoWords: the query holds nothing to search for.
	ErrNoWords = errors.New("The query has no words to search for.")
	// ErrLimit: Request.Limit is out of range.
	ErrLimit = errors.New("The limit must be between 1 and 100")
	// ErrQueryTooLong: the query has more than MaxQueryWords words or
	// MaxQueryBytes bytes.
	ErrQueryTooLong = errors.New("The query is too long: at most 32 words and 1000 bytes.")
)

// Request is one search. Request, Results and Hit are plain values, safe
// to share once made and not changed.
type Request struct {
	// Query is what to look for (see the package documentation).
	Query string
	// Dir is the memory path to search under ("/memories/notes"); empty
	// means /memories. A file's path finds that file only.
	Dir string
	// Limit is how many hits to return, 1 to MaxLimit; 0 means
	// DefaultLimit.
	Limit int
}

// Results is the outcome of a Search.
type Results struct {
	Query string `json:"query"`
	Dir   string `json:"dir"`   // the normalised directory: "/memories/notes"
	Total int    `json:"total"` // how many files match; Hits holds the best Limit
	Hits  []Hit  `json:"hits"`
}

// Hit is one matching file.
type Hit struct {
	Path    string  `json:"path"`    // "/memories/notes/a.md"
	Score   float64 `json:"score"`   // BM25, rounded to 4 decimals; higher is better
	Lines   []int   `json:"lines"`   // 1-based lines that match, ascending, the first 50
	Line    int     `json:"line"`    // the line of Snippet: the one with the most matches
	Snippet string  `json:"snippet"` // that line, at most 160 characters, matches in « »
}

// Search brings the index up to date (see the package documentation) and
// answers req. On error the Results are zero; the error wraps ErrNoWords,
// ErrQueryTooLong, ErrLimit, a *memory.Error of kind memory.ErrInvalidPath,
// or the store's error (or the context's).
func (x *Index) Search(ctx context.Context, req Request) (Results, error) {
	dirKey, err := memory.Resolve(cmp.Or(req.Dir, "/memories"))
	if err != nil {
		return Results{}, err
	}
	limit := req.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 1 || limit > MaxLimit {
		return Results{}, fmt.Errorf("%w; got %d.", ErrLimit, req.Limit)
	}
	if len(req.Query) > MaxQueryBytes {
		return Results{}, ErrQueryTooLong
	}
	cls := parse(req.Query)
	if len(cls) == 0 {
		return Results{}, ErrNoWords
	}
	words := 0
	for _, c := range cls {
		words += len(c.terms)
	}
	if words > MaxQueryWords {
		return Results{}, ErrQueryTooLong
	}
	if err := x.sync(ctx); err != nil {
		return Results{}, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	res := Results{Query: req.Query, Dir: memory.PathOf(dirKey), Hits: []Hit{}}
	scores := x.p.score(cls, dirKey)
	res.Total = len(scores)
	for _, s := range scores[:min(limit, len(scores))] {
		if err := ctx.Err(); err != nil {
			return Results{}, fmt.Errorf("search: %w", err)
		}
		d := x.p.docs[s.doc]
		h := snippet(d.text, cls)
		h.Path = memory.PathOf(d.key)
		h.Score = math.Round(s.score*1e4) / 1e4
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// clause is one part of a query: a word, a phrase (several words) or a
// prefix (one word ending in *).
type clause struct {
	terms  []string
	prefix bool
}

// parse splits a query into clauses. A word that folds into several terms
// ("e-mail", "東京") is a phrase; in a prefix word that does, the words
// before the last are words of their own.
func parse(q string) []clause {
	var out []clause
	word := func(w string) {
		prefix := strings.HasSuffix(w, "*")
		ts := terms(strings.TrimRight(w, "*"))
		switch {
		case len(ts) == 0:
		case prefix:
			for _, t := range ts[:len(ts)-1] {
				out = append(out, clause{terms: []string{t}})
			}
			out = append(out, clause{terms: ts[len(ts)-1:], prefix: true})
		default:
			out = append(out, clause{terms: ts})
		}
	}
	for len(q) > 0 {
		if i := strings.IndexByte(q, '"'); i >= 0 {
			for _, w := range strings.Fields(q[:i]) {
				word(w)
			}
			rest := q[i+1:]
			j := strings.IndexByte(rest, '"')
			if j < 0 {
				j = len(rest)
			}
			if ts := terms(rest[:j]); len(ts) > 0 {
				out = append(out, clause{terms: ts})
			}
			q = rest[min(j+1, len(rest)):]
			continue
		}
		for _, w := range strings.Fields(q) {
			word(w)
		}
		break
	}
	return out
}

type scored struct {
	doc   uint32
	score float64
}

// score returns the files under dirKey that match a clause, best first
// (ties in key order).
func (p *postings) score(cls []clause, dirKey string) []scored {
	n := float64(p.live())
	if n == 0 {
		return nil
	}
	avg := float64(p.tokens) / n
	total := make([]float64, len(p.docs)) // BM25 is > 0 for a file that matches
	norm := make([]float64, len(p.docs))  // k1 * (1 - b + b*length/avg), for a file in dirKey; 0 outside
	for id, d := range p.docs {
		if d != nil && within(d.key, dirKey) {
			norm[id] = k1 * (1 - b + b*float64(d.length)/avg)
		}
	}
	add := func(df int, each func(func(id uint32, tf uint32))) {
		idf := math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
		each(func(id, tf uint32) {
			if norm[id] == 0 {
				return
			}
			f := float64(tf)
			total[id] += idf * f * (k1 + 1) / (f + norm[id])
		})
	}
	term := func(list []posting) {
		add(len(list), func(f func(uint32, uint32)) {
			for _, q := range list {
				f(q.doc, q.n)
			}
		})
	}
	for _, c := range cls {
		switch {
		case c.prefix:
			held := func(t uint32) bool { return int(t) < len(p.lists) && len(p.lists[t]) > 0 }
			for _, t := range p.dict.withPrefix(c.terms[0], maxExpansions, held) {
				term(p.lists[t])
			}
		case len(c.terms) == 1:
			term(p.list(c.terms[0]))
		default:
			tfs := p.phraseFreqs(c.terms)
			add(len(tfs), func(f func(uint32, uint32)) {
				for _, q := range tfs {
					f(q.doc, q.n)
				}
			})
		}
	}
	var out []scored
	for id, s := range total {
		if s > 0 {
			out = append(out, scored{uint32(id), s})
		}
	}
	slices.SortFunc(out, func(a, c scored) int {
		if a.score != c.score {
			return cmp.Compare(c.score, a.score)
		}
		return strings.Compare(p.docs[a.doc].key, p.docs[c.doc].key)
	})
	return out
}

// phraseFreqs returns the files that hold the phrase, with how often each
// does (in posting.n).
func (p *postings) phraseFreqs(ts []string) []posting {
	lists := make([][]posting, len(ts))
	rarest := 0
	for i, t := range ts {
		lists[i] = p.list(t)
		if len(lists[i]) == 0 {
			return nil
		}
		if len(lists[i]) < len(lists[rarest]) {
			rarest = i
		}
	}
	// at[i][doc]: 1 + the index of doc's posting in lists[i], 0 for none
	at := make([][]int32, len(ts))
	for i, list := range lists {
		at[i] = make([]int32, len(p.docs))
		for j, q := range list {
			at[i][q.doc] = int32(j + 1)
		}
	}
	var out []posting
	for _, cand := range lists[rarest] {
		id := cand.doc
		if at[0][id] == 0 {
			continue
		}
		d := p.docs[id]
		first := lists[0][at[0][id]-1]
		count := uint32(0)
	starts:
		for _, pos := range d.pos[first.off : first.off+first.n] {
			for i := 1; i < len(ts); i++ {
				j := at[i][id]
				if j == 0 {
					break starts
				}
				q := lists[i][j-1]
				if _, found := slices.BinarySearch(d.pos[q.off:q.off+q.n], pos+uint32(i)); !found {
					continue starts
				}
			}
			count++
		}
		if count > 0 {
			out = append(out, posting{doc: id, n: count})
		}
	}
	return out
}

// span is a match: text[start:end].
type span struct{ start, end int }

// within reports whether key is dirKey or lies beneath it.
func within(key, dirKey string) bool {
	return dirKey == "" || key == dirKey || strings.HasPrefix(key, dirKey+"/") && len(key) > len(dirKey)
}

// snippet finds where cls match text: the lines, and the best line marked.
func snippet(text string, cls []clause) Hit {
	type tok struct {
		term       string
		start, end int
	}
	var toks []tok
	tokenize(text, func(term []byte, start, end int) bool {
		toks = append(toks, tok{string(term), start, end})
		return true
	})
	var marks []span
	for i, tk := range toks {
		for _, c := range cls {
			switch {
			case c.prefix:
				if strings.HasPrefix(tk.term, c.terms[0]) {
					marks = append(marks, span{tk.start, tk.end})
				}
			case i+len(c.terms) <= len(toks):
				ok := true
				for j, t := range c.terms {
					if toks[i+j].term != t {
						ok = false
						break
					}
				}
				if ok {
					marks = append(marks, span{tk.start, toks[i+len(c.terms)-1].end})
				}
			}
		}
	}
	slices.SortFunc(marks, func(a, c span) int { return cmp.Or(cmp.Compare(a.start, c.start), cmp.Compare(c.end, a.end)) })
	// merge overlapping marks (a phrase and one of its words)
	merged := marks[:0]
	for _, m := range marks {
		if n := len(merged); n > 0 && m.start < merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, m.end)
			continue
		}
		merged = append(merged, m)
	}
	marks = merged
	h := Hit{Lines: []int{}}
	if len(marks) == 0 {
		return h
	}
	// line of each mark; the best line has the most marks (the first of equals)
	line, lineStart, mi := 1, 0, 0
	bestLine, bestCount, bestStart := 0, 0, 0
	count := 0
	flush := func() {
		if count > bestCount {
			bestLine, bestCount, bestStart = line, count, lineStart
		}
		count = 0
	}
	for mi < len(marks) {
		nl := strings.IndexByte(text[lineStart:], '\n')
		lineEnd := len(text)
		if nl >= 0 {
			lineEnd = lineStart + nl
		}
		for mi < len(marks) && marks[mi].start < lineEnd {
			if count == 0 && len(h.Lines) < maxHitLines {
				h.Lines = append(h.Lines, line)
			}
			count++
			mi++
		}
		flush()
		if nl < 0 {
			break
		}
		line, lineStart = line+1, lineEnd+1
	}
	lineEnd := len(text)
	if nl := strings.IndexByte(text[bestStart:], '\n'); nl >= 0 {
		lineEnd = bestStart + nl
	}
	h.Line = bestLine
	var in []span
	for _, m := range marks {
		if m.start >= bestStart && m.start < lineEnd {
			in = append(in, span{m.start - bestStart, min(m.end, lineEnd) - bestStart})
		}
	}
	h.Snippet = markLine(strings.TrimSuffix(text[bestStart:lineEnd], "\r"), in)
	return h
}

// markLine returns line, cut to snippetRunes characters around its first
// mark ("…" where it was cut), with each mark in « ».
func markLine(line string, marks []span) string {
	from, to := 0, len(line)
	if utf8.RuneCountInString(line) > snippetRunes {
		// start a quarter of the window before the first mark
		from = marks[0].start
		for back := 0; back < snippetRunes/4 && from > 0; back++ {
			_, size := utf8.DecodeLastRuneInString(line[:from])
			from -= size
		}
		to = from
		for n := 0; n < snippetRunes && to < len(line); n++ {
			_, size := utf8.DecodeRuneInString(line[to:])
			to += size
		}
	}
	var sb strings.Builder
	if from > 0 {
		sb.WriteString("…")
	}
	at := from
	for _, m := range marks {
		if m.start < from || m.start >= to {
			continue
		}
		end := min(m.end, to)
		sb.WriteString(line[at:m.start])
		sb.WriteString(MarkStart)
		sb.WriteString(line[m.start:end])
		sb.WriteString(MarkEnd)
		at = end
	}
	sb.WriteString(line[at:to])
	if to < len(line) {
		sb.WriteString("…")
	}
	return strings.TrimSpace(sb.String())
}

// Text is the result the model reads (docs/spec.md "Search").
func (r Results) Text() string {
	var sb strings.Builder
	switch {
	case r.Total == 0:
		fmt.Fprintf(&sb, "No file matches %q in %s.", r.Query, r.Dir)
		return sb.String()
	case r.Total == 1:
		fmt.Fprintf(&sb, "Found 1 file for %q in %s:\n", r.Query, r.Dir)
	case r.Total > len(r.Hits):
		fmt.Fprintf(&sb, "Found %d files for %q in %s; the best %d:\n", r.Total, r.Query, r.Dir, len(r.Hits))
	default:
		fmt.Fprintf(&sb, "Found %d files for %q in %s:\n", r.Total, r.Query, r.Dir)
	}
	for _, h := range r.Hits {
		nums := make([]string, 0, shownLines)
		for _, l := range h.Lines[:min(shownLines, len(h.Lines))] {
			nums = append(nums, fmt.Sprint(l))
		}
		word := "lines"
		if len(h.Lines) == 1 {
			word = "line"
		}
		fmt.Fprintf(&sb, "%s (%s %s", h.Path, word, strings.Join(nums, ", "))
		if len(h.Lines) > shownLines {
			fmt.Fprintf(&sb, " and more")
		}
		fmt.Fprintf(&sb, ")\n%6d\t%s\n", h.Line, h.Snippet)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// ErrorText is the text the model reads when Search returned err: "Error: "
// and a sentence that names no host, key or credential.
func ErrorText(err error) string {
	var me *memory.Error
	switch {
	case errors.Is(err, ErrNoWords), errors.Is(err, ErrLimit), errors.Is(err, ErrQueryTooLong), errors.Is(err, ErrInvalidInput):
		return "Error: " + err.Error()
	case errors.As(err, &me):
		return "Error: " + me.Error()
	}
	return "Error: The memory storage failed: " + storageCause(err)
}

// storageCause is the short cause of a failed storage call, as the memory
// handler words it.
func storageCause(err error) string {
	var c memory.Causer
	if errors.As(err, &c) && c.ModelCause() != "" {
		return c.ModelCause()
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, blob.ErrTimeout):
		return "the request timed out"
	}
	return "the storage backend returned an error"
}
