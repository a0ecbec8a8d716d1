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
			buf = buf[:0]
			for i < len(text) && text[i] < utf8.RuneSelf && isASCIIWord(text[i]) {
				b := text[i]
				if 'A' <= b && b <= 'Z' {
					b += 'a' - 'A'
				}
				buf = append(buf, b)
				i++
			}
			if i < len(text) && text[i] >= utf8.RuneSelf {
				if r, _ := utf8.DecodeRuneInString(text[i:]); isWordRune(r) && !isSolo(r) {
					i = wordEnd(text, i)
					if !emit([]byte(fold(text[start:i])), start, i) {
						return
					}
					continue
				}
			}
			if !emit(buf, start, i) {
				return
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case isSolo(r):
			if !emit([]byte(fold(text[i:i+size])), i, i+size) {
				return
			}
			i += size
		case isWordRune(r) && !unicode.Is(unicode.Mn, r):
			start := i
			i = wordEnd(text, i)
			if !emit([]byte(fold(text[start:i])), start, i) {
				return
			}
		default:
			i += size
		}
	}
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
