package redis

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

func TestCheckPrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", DefaultPrefix},
		{"agent1", "agent1"},
		{"agents/agent-7", "agents/agent-7"},
		{"/agents/agent-7/", "agents/agent-7"},
		{"a:b", "a:b"},
		{"with space", "with space"},
		{"unicode/日本語", "unicode/日本語"},
	} {
		got, err := checkPrefix(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("checkPrefix(%q) = %q, %v; want %q, nil", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"/", "//", "a{b", "a}b", "{a}", "a//b", "a/./b", "..", "nul\x00", "bad\xff", strings.Repeat("x", blob.MaxKeyLen+1)} {
		got, err := checkPrefix(in)
		if !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("checkPrefix(%q) = %q, %v; want an error wrapping ErrInvalidKey", in, got, err)
		}
	}
}

func TestKeyNames(t *testing.T) {
	k := newKeys("agents/7")
	got := []string{k.object("notes/a.md"), k.idx, k.seq, k.writeMark("ID"), k.lockName("notes/a.md")}
	want := []string{"cm:{agents/7}:o:notes/a.md", "cm:{agents/7}:idx", "cm:{agents/7}:seq", "cm:{agents/7}:w:ID", "cm:{agents/7}:l:notes/a.md"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("name %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestLexRange(t *testing.T) {
	for _, tc := range []struct{ prefix, lo, hi string }{
		{"", "-", "+"},
		{"a/", "[a/", "(a/\xff"},
		{"a", "[a", "(a\xff"},
	} {
		lo, hi := lexRange(tc.prefix)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("lexRange(%q) = %q, %q; want %q, %q", tc.prefix, lo, hi, tc.lo, tc.hi)
		}
	}
}

// hashTag returns the part of a key name Redis Cluster hashes: the text
// between the first '{' and the next '}', when it is non-empty.
func hashTag(name string) string {
	i := strings.IndexByte(name, '{')
	if i < 0 {
		return name
	}
	j := strings.IndexByte(name[i+1:], '}')
	if j <= 0 {
		return name
	}
	return name[i+1 : i+1+j]
}

// names returns every key name the store with prefix p can use for the
// blob key key (and the write mark id).
func names(p, key, id string) map[string]string {
	k := newKeys(p)
	return map[string]string{"object": k.object(key), "idx": k.idx, "seq": k.seq, "mark": k.writeMark(id)}
}

// FuzzKeyNames checks the claims of the key scheme: every name of a store
// hashes to its prefix (one cluster slot), and two stores, or two blob keys
// of one store, never share a name.
func FuzzKeyNames(f *testing.F) {
	f.Add("a", "b", "a:b", "b")
	f.Add("a", "x:b", "a:x", "b")
	f.Add("a", "o:x", "a", "x")
	f.Add("a}b", "k", "a", "k")
	f.Add("p", "idx", "p", "seq")
	f.Fuzz(func(t *testing.T, p1, k1, p2, k2 string) {
		p1, err1 := checkPrefix(p1)
		p2, err2 := checkPrefix(p2)
		if err1 != nil || err2 != nil || blob.CheckKey(k1) != nil || blob.CheckKey(k2) != nil {
			return
		}
		n1, n2 := names(p1, k1, "ID1"), names(p2, k2, "ID2")
		for kind, name := range n1 {
			if tag := hashTag(name); tag != p1 {
				t.Fatalf("%s name %q hashes on %q, want the prefix %q", kind, name, tag, p1)
			}
		}
		for kind1, name1 := range n1 {
			for kind2, name2 := range n2 {
				if name1 != name2 {
					continue
				}
				same := p1 == p2 && kind1 == kind2 && (kind1 != "object" || k1 == k2) && kind1 != "mark"
				if !same {
					t.Fatalf("prefix %q %s %q and prefix %q %s %q share the name %q", p1, kind1, k1, p2, kind2, k2, name1)
				}
			}
		}
	})
}
