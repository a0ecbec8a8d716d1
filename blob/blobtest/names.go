package blobtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// nameTests check blob.Traits.ExclusiveNames on a store that reports it:
// the store itself keeps a name from being both an object and a prefix of
// other keys, so the memory handler makes no look of its own after a
// create. A store that does not report it skips them, saying so.
var nameTests = []test{
	{"ExclusiveNames", testExclusiveNames},
	{"ExclusiveNamesRace", testExclusiveNamesRace},
}

func needExclusiveNames(t *testing.T, s blob.Store) {
	t.Helper()
	if !blob.TraitsOf(s).ExclusiveNames {
		t.Skip("the store does not report blob.Traits.ExclusiveNames")
	}
}

// testExclusiveNames: every write that would make a name both an object
// and a directory fails with ErrPrecondition and changes nothing, whatever
// its condition; a rename onto such a name too.
func testExclusiveNames(t *testing.T, s blob.Store) {
	needExclusiveNames(t, s)
	putAll(t, s, "d/e/f", "file", "src")
	before := takeSnapshot(t, s)
	for _, key := range []string{"d", "d/e", "file/x", "file/x/y", "d/e/f/g"} {
		for _, cond := range []blob.Cond{{}, {IfAbsent: true}} {
			what := fmt.Sprintf("Put(%q, %+v)", key, cond)
			_, err := s.Put(t.Context(), key, []byte("clash"), cond)
			wantErr(t, what, err, blob.ErrPrecondition)
			wantUnchanged(t, s, before, what)
		}
	}
	for _, dst := range []string{"file/dst", "d/e/f/dst", "d/e"} {
		what := fmt.Sprintf("Rename(%q, %q)", "src", dst)
		err := blob.Rename(t.Context(), s, "src", dst)
		wantErr(t, what, err, blob.ErrPrecondition)
		wantUnchanged(t, s, before, what)
	}
}

// testExclusiveNamesRace: of writers racing to make one name an object and
// a directory, only one side wins, in every round.
func testExclusiveNamesRace(t *testing.T, s blob.Store) {
	needExclusiveNames(t, s)
	const rounds = 8
	for r := range rounds {
		name := fmt.Sprintf("r%d", r)
		key := func(i int) string {
			if i%2 == 0 {
				return name // an object
			}
			return fmt.Sprintf("%s/%d/k", name, i) // makes name a directory
		}
		errs := race(func(i int) error {
			_, err := s.Put(t.Context(), key(i), racerData(i), blob.Cond{IfAbsent: true})
			return err
		})
		won := map[bool]int{} // by whether the winner made name an object
		for i, err := range errs {
			switch {
			case err == nil:
				won[i%2 == 0]++
			case !errors.Is(err, blob.ErrPrecondition):
				t.Fatalf("round %d: Put(%q) = %v, want success or ErrPrecondition", r, key(i), err)
			}
		}
		if won[true] > 0 && won[false] > 0 || won[true] > 1 || won[true]+won[false] == 0 {
			t.Fatalf("round %d: %d writers of the object %q and %d of keys under it succeeded; want one of the object or any under it, never both",
				r, won[true], name, won[false])
		}
		_, statErr := s.Stat(t.Context(), name)
		under := listKeys(t, s, name+"/")
		if (statErr == nil) == (len(under) > 0) {
			t.Fatalf("round %d: Stat(%q) = %v with %d keys under it: want exactly one of the two", r, name, statErr, len(under))
		}
		if len(under) != won[false] {
			t.Fatalf("round %d: %d keys under %q, %d writers acknowledged", r, len(under), name, won[false])
		}
	}
}
