package search

import (
	"hash/maphash"
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
	local  spellTable // the file's spellings -> index in spell
	spell  []spelling // by local index
	buf    []byte     // the spellings' terms, back to back
	seq    []uint32   // the text's words' term IDs, in order
	serial uint32     // this analysis, for stamp
	stamp  []uint32   // by term ID: the serial of the last analysis that met it
	slot   []uint32   // by term ID: its index in analysis.terms, when stamp says so
}

// spelling is one way a file writes a term ("The", "the"): its term is
// scratch.buf[off:end], and id its term ID once known.
type spelling struct {
	off, end int
	id       uint32
	known    bool
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// spellTable is an open-addressing hash table from the spellings of one
// text (substrings of it, so never copied) to numbers. It does the one
// lookup per word of a build, so it is made for that: no string header
// hashed twice, no allocation per file. The zero value is empty.
type spellTable struct {
	seed  maphash.Seed
	slots []spellSlot // a power of two long, at most half full
	used  int
}

// spellSlot is one entry: the spelling text[start:end], numbered j-1 (0:
// an empty slot).
type spellSlot struct {
	hash       uint64
	start, end int
	j          uint32
}

// spellReset is the size above which a spellTable is made anew rather
// than cleared, so that one text of many words does not slow the next.
const spellReset = 1 << 14

// reset empties t for a new text.
func (t *spellTable) reset() {
	if t.slots == nil || len(t.slots) > spellReset {
		t.seed = maphash.MakeSeed()
		t.slots = make([]spellSlot, 1024)
	} else {
		clear(t.slots)
	}
	t.used = 0
}

// lookup returns the number of the spelling text[start:end]; when it has
// none, it gives it next and reports false.
func (t *spellTable) lookup(text string, start, end int, next uint32) (uint32, bool) {
	w := text[start:end]
	h := maphash.String(t.seed, w)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.j == 0 {
			*s = spellSlot{hash: h, start: start, end: end, j: next + 1}
			t.used++
			if 2*t.used > len(t.slots) {
				t.grow(text)
			}
			return next, false
		}
		if s.hash == h && text[s.start:s.end] == w {
			return s.j - 1, true
		}
	}
}

// grow doubles the table.
func (t *spellTable) grow(text string) {
	old := t.slots
	t.slots = make([]spellSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.j == 0 {
			continue
		}
		i := s.hash & mask
		for t.slots[i].j != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// analyse tokenises text, numbering new terms in d. Each spelling is
// folded and looked up in the dictionary once per file: the words are
// first numbered in a small table of the file's own (keyed by substrings
// of text, so without copying), then each spelling's term is looked up,
// under one read lock, and the new ones added under one write lock.
func analyse(text string, d *dict) analysis {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.local.reset()
	sc.spell, sc.buf, sc.seq = sc.spell[:0], sc.buf[:0], sc.seq[:0]
	words(text, func(start, end int, ascii bool) bool {
		j, ok := sc.local.lookup(text, start, end, uint32(len(sc.spell)))
		if !ok {
			off := len(sc.buf)
			sc.buf = appendTerm(sc.buf, text[start:end], ascii)
			sc.spell = append(sc.spell, spelling{off: off, end: len(sc.buf)})
		}
		sc.seq = append(sc.seq, j)
		return true
	})
	missing := 0
	d.mu.RLock()
	for i := range sc.spell {
		sp := &sc.spell[i]
		sp.id, sp.known = d.ids[string(sc.buf[sp.off:sp.end])]
		if !sp.known {
			missing++
		}
	}
	d.mu.RUnlock()
	if missing > 0 {
		d.mu.Lock()
		for i := range sc.spell {
			sp := &sc.spell[i]
			if sp.known {
				continue
			}
			t := string(sc.buf[sp.off:sp.end])
			id, ok := d.ids[t] // another file, or spelling, may have brought it meanwhile
			if !ok {
				id = uint32(len(d.names))
				d.ids[t] = id
				d.names = append(d.names, t)
				d.added = append(d.added, id)
			}
			sp.id = id
		}
		d.mu.Unlock()
	}
	for i, j := range sc.seq {
		sc.seq[i] = sc.spell[j].id
	}
	sc.serial++
	if sc.serial == 0 { // wrapped: forget every stamp
		clear(sc.stamp)
		sc.serial = 1
	}
	a := analysis{terms: make([]uint32, 0, len(sc.spell)), n: make([]uint32, 0, len(sc.spell))}
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
		for int(t) >= len(p.lists) {
			p.lists = append(p.lists, nil)
		}
		if p.lists[t] == nil {
			p.lists[t] = make([]posting, 0, 4)
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
