package azure

import (
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/cloudmem/cloudmem/blob"
)

// maxNameLen is Azure's limit on blob names, in characters.
const maxNameLen = 1024

// Blob names escape two characters of keys: the service stores '\' as '/',
// so '\' is written "[]", and '[', the escape character, is written "[[".
// Every other byte stands for itself. The escape preserves order and
// prefixes: '[' < '\' as "[[" < "[]", and both sort where '[' and '\' do
// among single bytes ('[' and '\' are adjacent, 0x5B and 0x5C, and "[[",
// "[]" both start with 0x5B); and since no escaped form is a prefix of
// another, escape(p) is a prefix of escape(k) exactly when p is a prefix of
// k. So listing the escaped prefix in name order is listing the prefix in
// key order.
var (
	escaper   = strings.NewReplacer("[", "[[", `\`, "[]")
	unescaper = strings.NewReplacer("[[", "[", "[]", `\`)
)

// escape returns the blob name (less the store prefix) of key.
func escape(key string) string { return escaper.Replace(key) }

// unescape returns the key whose blob name is name, and false when name is
// not the escape of any key (a '[' that does not start "[[" or "[]", or a
// raw '\', which the service would not store).
func unescape(name string) (string, bool) {
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '\\':
			return "", false
		case '[':
			if i+1 == len(name) || (name[i+1] != '[' && name[i+1] != ']') {
				return "", false
			}
			i++
		}
	}
	return unescaper.Replace(name), true
}

// nameLen is the length of a blob name as Azure counts it, in UTF-16 code
// units.
func nameLen(name string) int {
	n := 0
	for _, r := range name {
		n += utf16.RuneLen(r)
	}
	return n
}

// byteOrder turns a listing in UTF-16 code unit order (Azurite's) or in
// byte order into byte order. The two orders disagree only where, at the
// first difference, one key has a character in U+E000..U+FFFF and the other
// one at or above U+10000: UTF-16 puts the second first (its surrogates are
// below U+E000), byte order the first.
//
// After a key k arrives, every later key f follows k in either order, and
// then f >= bound(k) in byte order (see bound). So the keys held back that
// are <= bound(k) can be yielded, in byte order; a key without characters
// at or above U+10000 is its own bound and releases itself and all before
// it. The zero value is ready to use.
type byteOrder struct {
	held []blob.Info // sorted by key
}

// push takes the next Info of the listing and returns the ones now known to
// come next in byte order. The returned slice is valid until the next call.
func (o *byteOrder) push(info blob.Info) []blob.Info {
	i, _ := slices.BinarySearchFunc(o.held, info.Key, func(h blob.Info, key string) int { return strings.Compare(h.Key, key) })
	o.held = slices.Insert(o.held, i, info)
	b := bound(info.Key)
	n := 0
	for n < len(o.held) && o.held[n].Key <= b {
		n++
	}
	ready := slices.Clone(o.held[:n])
	o.held = slices.Delete(o.held, 0, n)
	return ready
}

// flush returns what is still held, at the end of the listing.
func (o *byteOrder) flush() []blob.Info {
	ready := o.held
	o.held = nil
	return ready
}

// bound returns the least key, in byte order, that can follow k in either
// listing order: k itself, unless k has a character at or above U+10000. A
// later key f shares some prefix with k and then has a greater UTF-16 code
// unit there (or extends k). That makes f greater in byte order too, except
// where k's character is at or above U+10000 and f's is in
// U+E000..U+FFFF; the least such f is k up to k's first such character,
// then U+E000.
func bound(k string) string {
	for i, r := range k {
		if r >= 0x10000 {
			return k[:i] + "\uE000"
		}
	}
	return k
}
