package azure

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/cloudmem/cloudmem/blob"
)

func TestEscape(t *testing.T) {
	for key, name := range map[string]string{
		"notes/a.md":   "notes/a.md",
		`back\slash`:   "back[]slash",
		"brackets[]{}": "brackets[[]{}",
		`a\[b`:         "a[][[b",
		`[\`:           "[[[]",
		`\\[[`:         "[][][[[[",
		"日本語/ファイル.md":  "日本語/ファイル.md",
	} {
		if got := escape(key); got != name {
			t.Errorf("escape(%q) = %q, want %q", key, got, name)
		}
		if got, ok := unescape(name); !ok || got != key {
			t.Errorf("unescape(%q) = %q, %v; want %q, true", name, got, ok, key)
		}
	}
	// Names this store never writes: a lone '[', a raw '\'.
	for _, name := range []string{"[", "a[", "a[b", "[x]", `a\b`, "[[[", "a/[/b"} {
		if got, ok := unescape(name); ok {
			t.Errorf("unescape(%q) = %q, true; want false", name, got)
		}
	}
}

// FuzzEscape checks that escape is invertible, never writes '\', and keeps
// byte order and prefixes, which List relies on.
func FuzzEscape(f *testing.F) {
	f.Add(`a\b`, "a[b")
	f.Add("[", `\`)
	f.Add("[[", "[]")
	f.Add("Z", "[")
	f.Add(`\`, "]")
	f.Fuzz(func(t *testing.T, a, b string) {
		ea, eb := escape(a), escape(b)
		if strings.Contains(ea, `\`) {
			t.Fatalf("escape(%q) = %q contains a backslash", a, ea)
		}
		if got, ok := unescape(ea); !ok || got != a {
			t.Fatalf("unescape(escape(%q)) = %q, %v", a, got, ok)
		}
		if got, want := strings.Compare(ea, eb), strings.Compare(a, b); got != want {
			t.Fatalf("order of %q, %q is %d, of their escapes %q, %q is %d", a, b, want, ea, eb, got)
		}
		if got, want := strings.HasPrefix(eb, ea), strings.HasPrefix(b, a); got != want {
			t.Fatalf("HasPrefix(%q, %q) = %v, for the escapes %v", b, a, want, got)
		}
	})
}

func TestNameLen(t *testing.T) {
	for name, want := range map[string]int{
		"":                        0,
		"abc":                     3,
		"é":                       1, // two bytes, one code unit
		"日本":                      2, // six bytes
		"\U0001F600":              2, // four bytes, a surrogate pair
		strings.Repeat("m", 1024): 1024,
	} {
		if got := nameLen(name); got != want {
			t.Errorf("nameLen(%q) = %d, want %d", name, got, want)
		}
	}
}

func TestBound(t *testing.T) {
	for k, want := range map[string]string{
		"":                      "",
		"a/b":                   "a/b",
		"a/\uFFFF":              "a/\uFFFF",
		"a/\U0001F600/x":        "a/\uE000",
		"\U00010000":            "\uE000",
		"é\U0001F600\U0001F601": "é\uE000",
	} {
		if got := bound(k); got != want {
			t.Errorf("bound(%q) = %q, want %q", k, got, want)
		}
	}
}

// utf16Compare orders strings as JavaScript does: by UTF-16 code units.
func utf16Compare(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// reorder runs keys, in the given order, through a byteOrder and returns
// what it yields.
func reorder(keys []string) []string {
	var o byteOrder
	var out []string
	for _, k := range keys {
		for _, info := range o.push(blob.Info{Key: k}) {
			out = append(out, info.Key)
		}
	}
	for _, info := range o.flush() {
		out = append(out, info.Key)
	}
	return out
}

func TestByteOrderExample(t *testing.T) {
	// Azurite's order, measured: "😀" before "\ue000" before "！".
	in := []string{"a", "b/\U0001F600", "b/\U0001F600x", "b/\uE000", "b/\uFF01", "c", "\U0001F600", "\uE000"}
	want := []string{"a", "b/\uE000", "b/\uFF01", "b/\U0001F600", "b/\U0001F600x", "c", "\uE000", "\U0001F600"}
	if got := reorder(in); !slices.Equal(got, want) {
		t.Fatalf("reorder = %q, want %q", got, want)
	}
	// A key without characters above U+FFFF is yielded at once.
	var o byteOrder
	if got := o.push(blob.Info{Key: "a"}); len(got) != 1 || got[0].Key != "a" {
		t.Fatalf("push(a) = %v, want [a]", got)
	}
	if got := o.push(blob.Info{Key: "b\U0001F600"}); len(got) != 0 {
		t.Fatalf("push(b😀) = %v, want it held", got)
	}
	if got := o.push(blob.Info{Key: "c"}); len(got) != 2 || got[0].Key != "b\U0001F600" || got[1].Key != "c" {
		t.Fatalf("push(c) = %v, want [b😀 c]", got)
	}
}

// TestByteOrderRandom lists random keys, drawn from an alphabet where the
// two orders disagree, in UTF-16 order and in byte order, and requires
// byte order out of both.
func TestByteOrderRandom(t *testing.T) {
	alphabet := []rune{'a', 'b', '/', 'é', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF', 0x10000, 0x1F600, 0x10FFFF}
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 2000 {
		seen := map[string]bool{}
		var keys []string
		for range r.IntN(40) {
			k := make([]rune, 1+r.IntN(5))
			for i := range k {
				k[i] = alphabet[r.IntN(len(alphabet))]
			}
			if s := string(k); !seen[s] {
				seen[s] = true
				keys = append(keys, s)
			}
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		in := slices.Clone(keys)
		slices.SortFunc(in, utf16Compare)
		if got := reorder(in); !slices.Equal(got, want) {
			t.Fatalf("round %d: reorder of UTF-16 order %q\n= %q\nwant %q", round, in, got, want)
		}
		if got := reorder(want); !slices.Equal(got, want) {
			t.Fatalf("round %d: reorder of byte order %q = %q", round, want, got)
		}
	}
}
