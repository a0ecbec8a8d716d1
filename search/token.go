package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A token is one word of a text: its folded term and where it lies.
type token struct {
	term       string
	start, end int // byte offsets of the word in the text
}

// tokenize calls emit for each word of text, in order. A word is a run of
// letters, digits and combining marks; a letter of a script written
// without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) is a
// word of its own, so that a run of them is found as a phrase. Terms are
// folded (see fold), so "Ｃａｆé", "CAFÉ", "cafe" and "café" (composed or
// not) are one term. emit's term is only valid during the call (tokenize reuses
// its buffer); stop by returning false.
func tokenize(text string, emit func(term []byte, start, end int) bool) {
	var buf []byte
	words(text, func(start, end int, ascii bool) bool {
		buf = appendTerm(buf[:0], text[start:end], ascii)
		return emit(buf, start, end)
	})
}

// words calls emit with the byte offsets of each word of text (see
// tokenize), and whether the word is all ASCII; stop by returning false.
// It does not fold: appendTerm makes a word's term.
func words(text string, emit func(start, end int, ascii bool) bool) {
	i := 0
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if !isASCIIWord(c) {
				i++
				continue
			}
			// ASCII fast path: a run of ASCII letters and digits, which
			// ends the word unless a non-ASCII letter follows.
			start := i
			for i < len(text) && text[i] < utf8.RuneSelf && isASCIIWord(text[i]) {
				i++
			}
			if i < len(text) && text[i] >= utf8.RuneSelf {
				if r, _ := utf8.DecodeRuneInString(text[i:]); isWordRune(r) && !isSolo(r) {
					i = wordEnd(text, i)
					if !emit(start, i, false) {
						return
					}
					continue
				}
			}
			if !emit(start, i, true) {
				return
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isSolo(r):
			if !emit(i, i+size, false) {
				return
			}
			i += size
		case isWordRune(r) && !unicode.Is(unicode.Mn, r):
			start := i
			i = wordEnd(text, i)
			if !emit(start, i, false) {
				return
			}
		default:
			i += size
		}
	}
}

// appendTerm appends the term of word to buf: an ASCII word in lower
// case, any other folded (see fold).
func appendTerm(buf []byte, word string, ascii bool) []byte {
	if !ascii {
		return append(buf, fold(word)...)
	}
	for i := 0; i < len(word); i++ {
		b := word[i]
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		buf = append(buf, b)
	}
	return buf
}

// wordEnd returns the end of the word that continues at i.
func wordEnd(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isWordRune(r) || isSolo(r) {
			break
		}
		i += size
	}
	return i
}

func isASCIIWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIWord(byte(r))
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// isSolo reports whether r is a letter of a script written without spaces
// between words; each such letter is a word of its own.
func isSolo(r rune) bool {
	if r < 0x0E00 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// fold returns the term of a non-ASCII word: NFKD, without the accents of
// Latin, Greek and Cyrillic letters (nonspacing marks after them), NFC,
// lower case. So "Café", "CAFE" and "cafe" are one term; the marks of other
// scripts, which change a letter, stay.
func fold(word string) string {
	d := norm.NFKD.String(word)
	var sb strings.Builder
	sb.Grow(len(d))
	alphabetic := false
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			if alphabetic {
				continue
			}
		} else {
			alphabetic = unicode.In(r, unicode.Latin, unicode.Greek, unicode.Cyrillic)
		}
		sb.WriteRune(r)
	}
	return strings.ToLower(norm.NFC.String(sb.String()))
}

// terms returns the folded terms of text, in order (a query's words).
func terms(text string) []string {
	var out []string
	tokenize(text, func(term []byte, _, _ int) bool {
		out = append(out, string(term))
		return true
	})
	return out
}
