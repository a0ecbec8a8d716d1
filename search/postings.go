package search

import (
	"slices"
	"strings"
	"sync"
)

// dict numbers the terms. Its IDs are never reused: a term whose files are
// all gone keeps its ID, with no postings, until the index is compacted
// (postings.compacted). It is safe for concurrent use.
type dict struct {
	mu    sync.RWMutex
	ids   map[string]uint32
	names []string
	// sorted holds the IDs in order of their names, for prefix queries;
	// added holds the IDs made since it was sorted.
	sorted []uint32
	added  []uint32
}

// id returns the ID of term, if it has one.
func (d *dict) id(term string) (uint32, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	id, ok := d.ids[term]
	return id, ok
}

// withPrefix returns the IDs of the terms that start with prefix and for
// which held is true (a term whose files are all gone is not), at most
// limit of them, in order of their names.
func (d *dict) withPrefix(prefix string, limit int, held func(uint32) bool) []uint32 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []uint32
	i, _ := slices.BinarySearchFunc(d.sorted, prefix, func(id uint32, p string) int { return strings.Compare(d.names[id], p) })
	for ; i < len(d.sorted) && strings.HasPrefix(d.names[d.sorted[i]], prefix); i++ {
		if held(d.sorted[i]) {
			out = append(out, d.sorted[i])
		}
	}
	for _, id := range d.added {
		if strings.HasPrefix(d.names[id], prefix) && held(id) {
			out = append(out, id)
		}
	}
	slices.SortFunc(out, func(a, b uint32) int { return strings.Compare(d.names[a], d.names[b]) })
	return out[:min(limit, len(out))]
}

// settle sorts the terms again when many were added since the last sort,
// so that withPrefix stays fast.
func (d *dict) settle() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.added) < 1024 && (d.sorted != nil || len(d.added) == 0) {
		return
	}
	d.sorted = append(d.sorted, d.added...)
	d.added = d.added[:0]
	slices.SortFunc(d.sorted, func(a, b uint32) int { return strings.Compare(d.names[a], d.names[b]) })
}

// postings is the inverted index: the in-memory state behind an Index,
// guarded by Index.mu. It is not safe for concurrent use on its own.
type postings struct {
	dict   *dict
	docs   []*doc            // by doc id; nil: a free slot
	free   []uint32          // free doc ids
	byKey  map[string]uint32 // key -> doc id of the indexed files
	lists  [][]posting       // by term ID
	tokens int64             // tokens of every indexed file (for the mean length)
}

// doc is one indexed file.
type doc struct {
	key     string
	version string
	text    string
	length  int      // tokens
	terms   []uint32 // its unique terms' IDs
	pos     []uint32 // token positions, grouped by term (see posting)
}

// posting says that doc holds a term: its positions are
// docs[doc].pos[off:off+n], ascending.
type posting struct {
	doc, off, n uint32
}

func newPostings() *postings {
	return &postings{dict: &dict{ids: map[string]uint32{}}, byKey: map[string]uint32{}}
}

// live returns the number of indexed files.
func (p *postings) live() int { return len(p.byKey) }

// list returns the postings of a term.
func (p *postings) list(term string) []posting {
	id, ok := p.dict.id(term)
	if !ok || int(id) >= len(p.lists) {
		return nil
	}
	return p.lists[id]
}

// analysis is a file's text broken into terms, made outside Index.mu.
type analysis struct {
	length int
	terms  []uint32 // unique term IDs, in order of first occurrence
	off, n []uint32 // each term's positions are pos[off[i]:off[i]+n[i]]
	pos    []uint32
}

// scratch is analyse's reusable state.
type scratch struct {
	seq    []uint32          // the text's term IDs, in order (fresh ones with freshBit)
	fresh  map[string]uint32 // terms the dictionary lacked -> index in names
	names  []string
	serial uint32   // this analysis, for stamp
	stamp  []uint32 // by term ID: the serial of the last analysis that met it
	slot   []uint32 // by term ID: its index in analysis.terms, when stamp says so
}

const freshBit = 1 << 31

var scratchPool = sync.Pool{New: func() any { return &scratch{fresh: map[string]uint32{}} }}

// analyse tokenises text, numbering new terms in d.
func analyse(text string, d *dict) analysis {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.seq, sc.names = sc.seq[:0], sc.names[:0]
	clear(sc.fresh)
	d.mu.RLock()
	tokenize(text, func(term []byte, _, _ int) bool {
		id, ok := d.ids[string(term)]
		if !ok {
			j, ok := sc.fresh[string(term)]
			if !ok {
				j = uint32(len(sc.names))
				t := string(term)
				sc.fresh[t] = j
				sc.names = append(sc.names, t)
			}
			id = freshBit | j
		}
		sc.seq = append(sc.seq, id)
		return true
	})
	d.mu.RUnlock()
	if len(sc.names) > 0 {
		ids := make([]uint32, len(sc.names))
		d.mu.Lock()
		for j, t := range sc.names {
			id, ok := d.ids[t] // another file may have brought it meanwhile
			if !ok {
				id = uint32(len(d.names))
				d.ids[t] = id
				d.names = append(d.names, t)
				d.added = append(d.added, id)
			}
			ids[j] = id
		}
		d.mu.Unlock()
		for i, id := range sc.seq {
			if id&freshBit != 0 {
				sc.seq[i] = ids[id&^freshBit]
			}
		}
	}
	sc.serial++
	if sc.serial == 0 { // wrapped: forget every stamp
		clear(sc.stamp)
		sc.serial = 1
	}
	var a analysis
	for _, id := range sc.seq {
		if int(id) >= len(sc.stamp) {
			n := max(int(id)+1, 2*len(sc.stamp))
			sc.stamp = slices.Grow(sc.stamp, n-len(sc.stamp))[:n]
			sc.slot = slices.Grow(sc.slot, n-len(sc.slot))[:n]
		}
		if sc.stamp[id] != sc.serial {
			sc.stamp[id], sc.slot[id] = sc.serial, uint32(len(a.terms))
			a.terms = append(a.terms, id)
			a.n = append(a.n, 0)
		}
		a.n[sc.slot[id]]++
	}
	a.length = len(sc.seq)
	a.off = make([]uint32, len(a.terms))
	fill := make([]uint32, len(a.terms))
	sum := uint32(0)
	for i, c := range a.n {
		a.off[i], fill[i] = sum, sum
		sum += c
	}
	a.pos = make([]uint32, len(sc.seq))
	for at, id := range sc.seq {
		i := sc.slot[id]
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
		if int(t) >= len(p.lists) {
			p.lists = append(p.lists, make([][]posting, int(t)+1-len(p.lists))...)
		}
		p.lists[t] = append(p.lists[t], posting{doc: id, off: a.off[i], n: a.n[i]})
	}
	p.docs[id] = &doc{key: key, version: version, text: text, length: a.length, terms: a.terms, pos: a.pos}
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
	for _, t := range d.terms {
		list := p.lists[t]
		if i := slices.IndexFunc(list, func(q posting) bool { return q.doc == id }); i >= 0 {
			list[i] = list[len(list)-1]
			p.lists[t] = list[:len(list)-1]
		}
	}
	p.tokens -= int64(d.length)
	p.docs[id] = nil
	p.free = append(p.free, id)
	delete(p.byKey, key)
}

// compactAt is the dictionary size from which compacted rebuilds an index
// whose dictionary is mostly terms no file holds any more.
const compactAt = 1 << 16

// compacted returns p, or, when most of its dictionary's terms (and at
// least compactAt of them) are held by no file, a new postings that indexes
// the same files with only their terms: so that writing and deleting new
// words does not grow the index without bound. The rebuild costs one
// tokenising of every file, and runs at most once per doubling of the dead
// terms.
func (p *postings) compacted() *postings {
	p.dict.mu.RLock()
	n := len(p.dict.names)
	p.dict.mu.RUnlock()
	if n < compactAt {
		return p
	}
	held := 0
	for _, l := range p.lists {
		if len(l) > 0 {
			held++
		}
	}
	if 2*held >= n {
		return p
	}
	q := newPostings()
	for _, d := range p.docs {
		if d != nil {
			q.put(d.key, d.version, d.text, analyse(d.text, q.dict))
		}
	}
	q.dict.settle()
	return q
}
