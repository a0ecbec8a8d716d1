package search

import (
	"slices"
	"strings"
	"sync"
)

// postings is the inverted index: the in-memory state behind an Index,
// guarded by Index.mu. It is not safe for concurrent use on its own.
type postings struct {
	docs   []*doc            // by doc id; nil: a free slot
	free   []uint32          // free doc ids
	byKey  map[string]uint32 // key -> doc id of the indexed files
	terms  map[string][]posting
	tokens int64 // tokens of every indexed file (for the mean length)

	// sorted holds the terms in order, for prefix queries; added holds the
	// terms added since it was sorted. A term in sorted may have lost its
	// postings since (terms says).
	sorted []string
	added  map[string]struct{}
}

// doc is one indexed file.
type doc struct {
	key     string
	version string
	text    string
	length  int      // tokens
	pos     []uint32 // token positions, grouped by term (see posting)
}

// posting says that doc holds a term: its positions are
// docs[doc].pos[off:off+n], ascending.
type posting struct {
	doc, off, n uint32
}

func newPostings() *postings {
	return &postings{byKey: map[string]uint32{}, terms: map[string][]posting{}, added: map[string]struct{}{}}
}

// live returns the number of indexed files.
func (p *postings) live() int { return len(p.byKey) }

// analysis is a file's text broken into terms, made outside the lock.
type analysis struct {
	length int
	terms  []string // unique terms, in order of first occurrence
	off, n []uint32 // each term's positions are pos[off[i]:off[i]+n[i]]
	pos    []uint32
}

// scratch is analyse's reusable state.
type scratch struct {
	index map[string]uint32
	seq   []uint32
}

var scratchPool = sync.Pool{New: func() any { return &scratch{index: map[string]uint32{}} }}

// analyse tokenises text.
func analyse(text string) analysis {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	clear(sc.index)
	sc.seq = sc.seq[:0]
	var a analysis
	tokenize(text, func(term []byte, _, _ int) bool {
		i, ok := sc.index[string(term)]
		if !ok {
			i = uint32(len(a.terms))
			t := string(term)
			sc.index[t] = i
			a.terms = append(a.terms, t)
			a.n = append(a.n, 0)
		}
		a.n[i]++
		sc.seq = append(sc.seq, i)
		return true
	})
	a.length = len(sc.seq)
	a.off = make([]uint32, len(a.terms))
	fill := make([]uint32, len(a.terms))
	sum := uint32(0)
	for i, c := range a.n {
		a.off[i], fill[i] = sum, sum
		sum += c
	}
	a.pos = make([]uint32, len(sc.seq))
	for at, i := range sc.seq {
		a.pos[fill[i]] = uint32(at)
		fill[i]++
	}
	return a
}

// put indexes text as the file key at version, replacing what was indexed
// under key.
func (p *postings) put(key, version, text string, a analysis) {
	p.remove(key)
	var id uint32
	if n := len(p.free); n > 0 {
		id, p.free = p.free[n-1], p.free[:n-1]
	} else {
		id = uint32(len(p.docs))
		p.docs = append(p.docs, nil)
	}
	for i, t := range a.terms {
		list, ok := p.terms[t]
		if !ok {
			p.added[t] = struct{}{}
		}
		p.terms[t] = append(list, posting{doc: id, off: a.off[i], n: a.n[i]})
	}
	p.docs[id] = &doc{key: key, version: version, text: text, length: a.length, pos: a.pos}
	p.byKey[key] = id
	p.tokens += int64(a.length)
}

// remove drops the file key from the index, if it is there.
func (p *postings) remove(key string) {
	id, ok := p.byKey[key]
	if !ok {
		return
	}
	d := p.docs[id]
	seen := map[string]struct{}{}
	tokenize(d.text, func(term []byte, _, _ int) bool {
		if _, ok := seen[string(term)]; ok {
			return true
		}
		t := string(term)
		seen[t] = struct{}{}
		list := p.terms[t]
		if i := slices.IndexFunc(list, func(q posting) bool { return q.doc == id }); i >= 0 {
			list[i] = list[len(list)-1]
			list = list[:len(list)-1]
		}
		if len(list) == 0 {
			delete(p.terms, t)
		} else {
			p.terms[t] = list
		}
		return true
	})
	p.tokens -= int64(d.length)
	p.docs[id] = nil
	p.free = append(p.free, id)
	delete(p.byKey, key)
}

// withPrefix returns the terms that start with prefix, at most limit of
// them, in order.
func (p *postings) withPrefix(prefix string, limit int) []string {
	var out []string
	i, _ := slices.BinarySearch(p.sorted, prefix)
	for ; i < len(p.sorted) && strings.HasPrefix(p.sorted[i], prefix); i++ {
		if _, ok := p.terms[p.sorted[i]]; ok {
			out = append(out, p.sorted[i])
		}
	}
	for t := range p.added {
		if strings.HasPrefix(t, prefix) {
			if _, ok := p.terms[t]; ok {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// settle re-sorts the terms when many were added since the last sort, so
// that withPrefix, which only reads, stays fast.
func (p *postings) settle() {
	if len(p.added) > 1024 || (p.sorted == nil && len(p.added) > 0) {
		p.resort()
	}
}

// resort rebuilds sorted from the terms held now.
func (p *postings) resort() {
	p.sorted = p.sorted[:0]
	for t := range p.terms {
		p.sorted = append(p.sorted, t)
	}
	slices.Sort(p.sorted)
	clear(p.added)
}
