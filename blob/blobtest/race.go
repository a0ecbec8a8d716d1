package blobtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

// raceTests check that conditions are enforced by the store, not by a read
// before the write: of N racing writers with the same condition, exactly
// one wins.
var raceTests = []test{
	{"PutIfAbsentRace", testPutIfAbsentRace},
	{"PutIfVersionRace", testPutIfVersionRace},
	{"DeleteIfVersionRace", testDeleteIfVersionRace},
}

// racers is how many goroutines race for one key.
const racers = 16

// race runs fn(i) for i in [0, racers) at once and returns their errors.
func race(fn func(i int) error) []error {
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// oneWinner checks that exactly one error is nil and that every other one
// wraps one of losers; it returns the winner's index.
func oneWinner(t *testing.T, what string, errs []error, losers ...error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("%s: racers %d and %d both succeeded", what, winner, i)
			}
			winner = i
			continue
		}
		lost := false
		for _, l := range losers {
			lost = lost || errors.Is(err, l)
		}
		if !lost {
			t.Fatalf("%s: racer %d failed with %v, want one of %q", what, i, err, losers)
		}
	}
	if winner < 0 {
		t.Fatalf("%s: no racer succeeded", what)
	}
	return winner
}

func racerData(i int) []byte { return fmt.Appendf(nil, "written by racer %d", i) }

func testPutIfAbsentRace(t *testing.T, s blob.Store) {
	versions := make([]string, racers)
	errs := race(func(i int) error {
		info, err := s.Put(t.Context(), "contended", racerData(i), blob.Cond{IfAbsent: true})
		versions[i] = info.Version
		return err
	})
	w := oneWinner(t, "Put(IfAbsent)", errs, blob.ErrPrecondition)
	if got := wantContent(t, s, "contended", racerData(w)); got.Version != versions[w] {
		t.Fatalf("stored version %q, the winner's Put returned %q", got.Version, versions[w])
	}
}

func testPutIfVersionRace(t *testing.T, s blob.Store) {
	v0 := put(t, s, "contended", []byte("v0")).Version
	versions := make([]string, racers)
	errs := race(func(i int) error {
		info, err := s.Put(t.Context(), "contended", racerData(i), blob.Cond{IfVersion: v0})
		versions[i] = info.Version
		return err
	})
	w := oneWinner(t, "Put(IfVersion)", errs, blob.ErrPrecondition)
	if got := wantContent(t, s, "contended", racerData(w)); got.Version != versions[w] {
		t.Fatalf("stored version %q, the winner's Put returned %q", got.Version, versions[w])
	}
}

func testDeleteIfVersionRace(t *testing.T, s blob.Store) {
	v0 := put(t, s, "contended", []byte("v0")).Version
	errs := race(func(int) error {
		return s.Delete(t.Context(), "contended", blob.Cond{IfVersion: v0})
	})
	oneWinner(t, "Delete(IfVersion)", errs, blob.ErrPrecondition, blob.ErrNotExist)
	wantAbsent(t, s, "contended")
}
