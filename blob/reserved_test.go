package blob_test

import (
	"context"
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cloudmem/cloudmem/blob"
)

func TestIsReserved(t *testing.T) {
	cases := map[string]bool{
		"":                     false,
		"notes/a.md":           false,
		".cloudmem":            true,
		".cloudmem/crypt-key":  true,
		"team/.cloudmem/x":     true,
		"team/alice/.cloudmem": true,
		".cloudmem-lock":       true,
		"a/.cloudmem-tmp-1/b":  true,
		// A case-insensitive file system (macOS, Windows) keeps these
		// where it keeps .cloudmem and .cloudmem-lock.
		".CLOUDMEM/files":  true,
		"a/.CloudMem-lock": true,
		// The Kelvin sign folds to k (blob.EqualFold), as mixed ASCII case.
		".CloudMem-Loc\u212a":        true,
		"a/.cloudmem/crypt-\u212aey": true,
		".cloudmemX":                 false,
		".cloudmem.md":               false,
		"a/b.cloudmem":               false,
		"x.cloudmem-y":               false,
	}
	for key, want := range cases {
		if got := blob.IsReserved(key); got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestEqualFold: the one rule by which every layer matches a reserved name
// in another case (the file store and crypt call it too): Unicode case
// folding, so the Kelvin sign is k and the long s is s, as mixed ASCII case
// is; letters with marks are other letters.
func TestEqualFold(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{".cloudmem/crypt-key", blob.EncryptionKeyName, true},
		{".CloudMem/CRYPT-Key", blob.EncryptionKeyName, true},
		{".cloudmem/crypt-\u212aey", blob.EncryptionKeyName, true},
		{".CLOUDMEM/Crypt-\u212aEY", blob.EncryptionKeyName, true},
		{"\u017fecret", "SECRET", true},
		{".cloudmem/crypt-\u0137ey", blob.EncryptionKeyName, false}, // k with cedilla
		{".cloudmem/crypt-key ", blob.EncryptionKeyName, false},
		{".cloudmem/crypt-ke", blob.EncryptionKeyName, false},
	} {
		if got := blob.EqualFold(c.a, c.b); got != c.want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestNoLookAlikeOfTheReservedName: no rune outside ASCII folds to a byte
// of ReservedName+"-" (its orbit under unicode.SimpleFold, by which
// strings.EqualFold compares, holds ASCII only), so IsReservedSegment may
// compare as many bytes of a segment as ReservedName has. The orbit of k,
// which holds the Kelvin sign, shows that the walk finds such a rune.
func TestNoLookAlikeOfTheReservedName(t *testing.T) {
	outside := func(c rune) (found []rune) {
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			if r >= utf8.RuneSelf {
				found = append(found, r)
			}
		}
		return found
	}
	for _, c := range blob.ReservedName + "-" {
		if found := outside(c); found != nil {
			t.Errorf("%q folds from %U", c, found)
		}
	}
	if found := outside('k'); !slices.Equal(found, []rune{'\u212a'}) {
		t.Errorf("k folds from %U, want the Kelvin sign alone", found)
	}
}

func TestActor(t *testing.T) {
	ctx := context.Background()
	if got := blob.Actor(ctx); got != "" {
		t.Fatalf("Actor of a bare context = %q, want empty", got)
	}
	ctx = blob.WithActor(ctx, "session 42")
	if got := blob.Actor(ctx); got != "session 42" {
		t.Fatalf("Actor = %q, want %q", got, "session 42")
	}
	if got := blob.Actor(blob.WithActor(ctx, "")); got != "" {
		t.Fatalf("Actor after WithActor(ctx, \"\") = %q, want empty", got)
	}
}
