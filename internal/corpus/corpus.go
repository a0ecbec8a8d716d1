// Package corpus generates the corpus of the search benchmarks at run time,
// deterministically, so that no corpus is committed and every engine (package
// search, and the candidates measured in the bench module) reads the same
// files: notes of English-like pseudo-words whose frequencies follow Zipf's
// law, as real prose does, with a few accented and CJK words.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// vocabulary is how many distinct words the corpus draws from.
const vocabulary = 30_000

var syllables = []string{"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "po", "de", "an", "er", "is", "on", "ur",
	"bel", "cor", "dan", "fin", "gal", "hor", "jun", "kes", "lum", "mar", "nor", "pel", "quin", "ros", "sul", "tev"}

// Word returns the word of frequency rank r (0 is the most frequent).
func Word(r int) string {
	var sb strings.Builder
	n := r + 1
	for n > 0 {
		sb.WriteString(syllables[n%len(syllables)])
		n /= len(syllables)
	}
	switch r % 97 {
	case 13:
		sb.WriteString("é")
	case 41:
		return "東京" + sb.String()
	}
	return sb.String()
}

// File is one generated memory file.
type File struct {
	Key  string // "d07/note0123.md"
	Text string
}

// Files returns n files of about size bytes each, in key order, the same
// for the same n and size.
func Files(n, size int) []File {
	rng := rand.New(rand.NewPCG(30, 2026))
	zipf := rand.NewZipf(rng, 1.07, 2, vocabulary-1)
	out := make([]File, n)
	for i := range out {
		var sb strings.Builder
		sb.Grow(size + 100)
		fmt.Fprintf(&sb, "# Note %d\n", i)
		for sb.Len() < size {
			words := 6 + rng.IntN(10)
			for w := range words {
				if w > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(Word(int(zipf.Uint64())))
			}
			sb.WriteString(".\n")
		}
		out[i] = File{Key: fmt.Sprintf("d%02d/note%04d.md", i%40, i), Text: sb.String()}
	}
	return out
}

// Queries returns the benchmark's queries: frequent, middling and rare
// words, two and three words, phrases and prefixes.
func Queries() []string {
	return []string{
		Word(0), Word(10), Word(200), Word(3000), Word(20000),
		Word(5) + " " + Word(500), Word(50) + " " + Word(5000) + " " + Word(15000),
		`"` + Word(1) + " " + Word(2) + `"`, `"` + Word(30) + " " + Word(40) + `"`,
		Word(100)[:3] + "*", Word(7000)[:4] + "*", Word(13), Word(41),
	}
}
