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

// scratch is analyse's reusable state. It remembers the term ID of every
// spelling it met ("The", "the", "café"), for the dictionary dict, so
// that a word spelled as in an earlier text costs one lookup in a table of
// its own: no folding, no lock, no lookup in the shared dictionary.
type scratch struct {
	dict   *dict      // the dictionary whose IDs known holds
	known  spellTable // spelling -> term ID, or newSpelling|index in spell
	spell  []spelling // the spellings of this text not met before
	buf    []byte     // their terms, back to back
	seq    []uint32   // the text's words' term IDs (or newSpelling|index), in order
	serial uint32     // this analysis, for marks
	marks  []termMark // by term ID: whether this analysis met it, and its number in terms
	terms  []uint32   // the text's unique term IDs, in order of first occurrence
	counts []uint32   // by number in terms: how often the text holds it
}

// termMark says which analysis last met a term (its serial) and the
// term's number in that text's terms.
type termMark struct{ serial, slot uint32 }

// newSpelling marks a number of scratch.known and scratch.seq that is not
// yet a term ID but the index of a spelling in scratch.spell.
const newSpelling = 1 << 31

// spelling is a spelling of the text being analysed that scratch.known
// did not hold, text[start:end]: its term is scratch.buf[off:end], and id
// its term ID once known.
type spelling struct {
	start, end  int
	off, bufEnd int
	id          uint32
	known       bool
}

// Bounds of what a scratch remembers: past either, it forgets every
// spelling before the next text, so that texts of ever new words (random
// tokens, hashes) cannot grow it without bound.
const (
	knownMax      = 1 << 17 // spellings
	knownMaxBytes = 4 << 20 // bytes of them
)

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// spellTable is an open-addressing hash table from spellings (copied into
// an arena of its own) to numbers. It does the one lookup per word of a
// build, so it is made for that: one hash per word, no allocation per
// word. The zero value is empty.
type spellTable struct {
	seed  maphash.Seed
	slots []spellSlot // a power of two long, at most half full
	arena []byte      // the spellings, back to back
	used  int
}

// spellSlot is one entry: the spelling arena[start:end], numbered n. Its
// tag is the high half of the spelling's hash with the lowest bit set, so
// that 0 is an empty slot. Sixteen bytes: four slots to a cache line.
type spellSlot struct {
	tag, start, end, n uint32
}

// tagOf is the tag of a spelling of hash h.
func tagOf(h uint64) uint32 { return uint32(h>>32) | 1 }

// reset empties t.
func (t *spellTable) reset() {
	t.seed = maphash.MakeSeed()
	t.slots = make([]spellSlot, 1024)
	t.arena = t.arena[:0]
	t.used = 0
}

// find returns the slot of word and its hash, and whether the slot holds
// word (else it is the empty slot where word goes).
func (t *spellTable) find(word string) (slot int, hash uint64, found bool) {
	h := maphash.String(t.seed, word)
	tag := tagOf(h)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.tag == 0 {
			return int(i), h, false
		}
		if s.tag == tag && string(t.arena[s.start:s.end]) == word {
			return int(i), h, true
		}
	}
}

// add puts word, of hash h, numbered n, in the empty slot find returned
// for it. It may grow the table, which moves every entry.
func (t *spellTable) add(slot int, h uint64, word string, n uint32) {
	start := len(t.arena)
	t.arena = append(t.arena, word...)
	t.slots[slot] = spellSlot{tag: tagOf(h), start: uint32(start), end: uint32(len(t.arena)), n: n}
	t.used++
	if 2*t.used > len(t.slots) {
		t.grow()
	}
}

// grow doubles the table.
func (t *spellTable) grow() {
	old := t.slots
	t.slots = make([]spellSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.tag == 0 {
			continue
		}
		i := maphash.String(t.seed, string(t.arena[s.start:s.end])) & mask
		for t.slots[i].tag != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// analyse tokenises text, numbering new terms in d. A spelling that the
// scratch met in an earlier text has its term ID at once. The others are
// folded once per text, their terms looked up in d under one read lock,
// the new ones added under one write lock, and remembered.
func analyse(text string, d *dict) analysis {
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	if sc.dict != d || sc.known.slots == nil || sc.known.used > knownMax || len(sc.known.arena) > knownMaxBytes {
		sc.dict = d
		sc.known.reset()
	}
	sc.spell, sc.buf, sc.seq = sc.spell[:0], sc.buf[:0], sc.seq[:0]
	words(text, func(start, end int, ascii bool) bool {
		w := text[start:end]
		slot, h, ok := sc.known.find(w)
		if ok {
			sc.seq = append(sc.seq, sc.known.slots[slot].n)
			return true
		}
		j := uint32(len(sc.spell))
		sc.known.add(slot, h, w, newSpelling|j)
		off := len(sc.buf)
		sc.buf = appendTerm(sc.buf, w, ascii)
		sc.spell = append(sc.spell, spelling{start: start, end: end, off: off, bufEnd: len(sc.buf)})
		sc.seq = append(sc.seq, newSpelling|j)
		return true
	})
	if len(sc.spell) > 0 {
		sc.number(text, d)
	}
	return sc.collect()
}

// number gives each new spelling of text its term ID, from d or new in d,
// and remembers it.
func (sc *scratch) number(text string, d *dict) {
	missing := 0
	d.mu.RLock()
	for i := range sc.spell {
		sp := &sc.spell[i]
		sp.id, sp.known = d.ids[string(sc.buf[sp.off:sp.bufEnd])]
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
			t := string(sc.buf[sp.off:sp.bufEnd])
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
	for _, sp := range sc.spell { // found again: the table may have grown since
		slot, _, _ := sc.known.find(text[sp.start:sp.end])
		sc.known.slots[slot].n = sp.id
	}
	for i, n := range sc.seq {
		if n&newSpelling != 0 {
			sc.seq[i] = sc.spell[n&^newSpelling].id
		}
	}
}

// collect makes the analysis of the text whose term IDs are sc.seq. It
// reads sc.marks once per word, where the term ID leads; everything else
// is indexed by the term's number in this text, so stays small and near.
func (sc *scratch) collect() analysis {
	sc.serial++
	if sc.serial == 0 { // wrapped: forget every mark
		clear(sc.marks)
		sc.serial = 1
	}
	sc.terms, sc.counts = sc.terms[:0], sc.counts[:0]
	for at, id := range sc.seq {
		if int(id) >= len(sc.marks) {
			n := max(int(id)+1, 2*len(sc.marks))
			sc.marks = slices.Grow(sc.marks, n-len(sc.marks))[:n]
		}
		m := &sc.marks[id]
		if m.serial != sc.serial {
			m.serial, m.slot = sc.serial, uint32(len(sc.terms))
			sc.terms = append(sc.terms, id)
			sc.counts = append(sc.counts, 0)
		}
		sc.counts[m.slot]++
		sc.seq[at] = m.slot // from here on, seq holds each word's number in terms
	}
	// terms and pos stay with the doc; off and n, one allocation, only
	// until put.
	k := len(sc.terms)
	a := analysis{length: len(sc.seq), terms: slices.Clone(sc.terms)}
	offN := make([]uint32, 2*k)
	a.off, a.n = offN[:k:k], offN[k:]
	copy(a.n, sc.counts)
	sum := uint32(0)
	for i, c := range a.n { // counts becomes where each term's next position goes
		a.off[i], sc.counts[i] = sum, sum
		sum += c
	}
	a.pos = make([]uint32, len(sc.seq))
	for at, j := range sc.seq {
		a.pos[sc.counts[j]] = uint32(at)
		sc.counts[j]++
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

// parsed is a file read and analysed, to be put in the postings.
type parsed struct {
	key, version, text string
	a                  analysis
}

// putAll puts the files as put does, having first grown each term's
// postings list once for all of them (appending file after file grows a
// frequent term's list, and copies it, a dozen times in a build).
func (p *postings) putAll(files []parsed) {
	top := -1
	for _, f := range files {
		for _, t := range f.a.terms {
			top = max(top, int(t))
		}
	}
	counts := make([]uint32, top+1)
	for _, f := range files {
		for _, t := range f.a.terms {
			counts[t]++
		}
	}
	if len(p.lists) <= top {
		p.lists = slices.Grow(p.lists, top+1-len(p.lists))[:top+1]
	}
	for t, n := range counts {
		if n > 0 {
			p.lists[t] = slices.Grow(p.lists[t], int(n))
		}
	}
	for _, f := range files {
		p.put(f.key, f.version, f.text, f.a)
	}
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
	var files []parsed
	for _, d := range p.docs {
		if d != nil {
			files = append(files, parsed{d.key, d.version, d.text, analyse(d.text, q.dict)})
		}
	}
	q.putAll(files)
	q.dict.settle()
	return q
}
