package memorytest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// A name is a file or a directory, never both: docs/spec.md "Paths".

const (
	namePairs    = 100 // racing pairs in RunFileOrDirectory
	pairsAtATime = 20  // pairs released together by one barrier
)

// RunFileOrDirectory races create /memories/tN/a against create
// /memories/tN/a/b, 100 pairs, each pair's two writers (each with its own
// Handler) released at the same instant, 20 pairs at a time, on one store
// from newStore (which must return an empty store). It fails if any name
// ends up both a file and a directory, if a writer is told it succeeded
// but its file is not there, or if a refusal is not the contract's text.
// It then seeds a name that is both (keys t/a and t/a/b written directly,
// as another tool could) and checks that delete and rename of t leave
// nothing behind; a store that cannot hold such a pair is told so in the
// log and that part is skipped.
func RunFileOrDirectory(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Helper()
	t.Run("race", func(t *testing.T) { raceFileOrDirectory(t, yielding{newStore(t)}) })
	t.Run("seeded both", func(t *testing.T) { seededBoth(t, newStore) })
}

func raceFileOrDirectory(t *testing.T, s blob.Store) {
	type pair struct {
		file, under string
		results     [2]memory.Result
	}
	won := map[byte]int{}
	for first := 0; first < namePairs; first += pairsAtATime {
		pairs := make([]pair, pairsAtATime)
		var ready, done sync.WaitGroup
		start := make(chan struct{})
		for n := range pairs {
			p := &pairs[n]
			p.file = fmt.Sprintf("/memories/t%03d/a", first+n)
			p.under = p.file + "/b"
			for i, path := range []string{p.file, p.under} {
				h := newHandler(t, s)
				ready.Add(1)
				done.Add(1)
				go func() {
					defer done.Done()
					ready.Done()
					<-start
					p.results[i] = h.Create(t.Context(), path, path)
				}()
			}
		}
		ready.Wait()
		close(start) // every writer of this batch at once
		done.Wait()
		for _, p := range pairs {
			won[checkPair(t, s, p.file, p.under, p.results[:])]++
		}
	}
	t.Logf("%d pairs: the file won %d, the directory %d, both refused %d", namePairs, won['f'], won['d'], won[0])
}

// checkPair checks one pair's outcome and returns 'f' when the file won,
// 'd' when the directory did, 0 when both were refused.
func checkPair(t *testing.T, s blob.Store, file, under string, results []memory.Result) byte {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	fileKey, underKey := strings.TrimPrefix(file, "/memories/"), strings.TrimPrefix(under, "/memories/")
	_, errFile := s.Stat(ctx, fileKey)
	beneath, err := blob.ListAll(ctx, s, fileKey+"/")
	if err != nil {
		t.Fatalf("List %q: %v", fileKey+"/", err)
	}
	// Some listings hide keys under an object (MinIO lists nothing under
	// t/a while the object t/a exists), so the key beneath is looked up too.
	_, errUnder := s.Stat(ctx, underKey)
	isFile, isDir := errFile == nil, len(beneath) > 0 || errUnder == nil
	if isFile && isDir {
		t.Errorf("%s is both a file and a directory (results: %s; %s)", file, describe(results[0]), describe(results[1]))
	}
	created := [2]bool{same(results[0], ok(created(file))), same(results[1], ok(created(under)))}
	refusedFile := same(results[0], fail(exists(file))) || same(results[0], fail(conflictText(file)))
	refusedDir := same(results[1], fail(ancestorIsFile(file))) || same(results[1], fail(conflictText(under)))
	switch {
	case created[0] && created[1]:
		t.Errorf("%s and %s were both reported created", file, under)
	case !created[0] && !refusedFile:
		t.Errorf("create %s: %s", file, describe(results[0]))
	case !created[1] && !refusedDir:
		t.Errorf("create %s: %s", under, describe(results[1]))
	case created[0] != isFile:
		t.Errorf("create %s reported %v, but the file is there: %v", file, created[0], isFile)
	case created[1] && errUnder != nil:
		t.Errorf("create %s reported done, but it is not there: %v", under, errUnder)
	case created[1] && len(beneath) > 1:
		t.Errorf("create %s reported done, and beneath %s the store holds %v", under, file, beneath)
	case created[0]:
		return 'f'
	case created[1]:
		return 'd'
	}
	return 0
}

// conflictText is the contract's text for a command that kept losing races.
func conflictText(path string) string {
	return "The file " + path + " was changed by another writer at the same time; no change was made. Try the command again."
}

// seededBoth writes t/a and t/a/b directly, and checks that delete and
// rename of /memories/t leave nothing under t.
func seededBoth(t *testing.T, newStore func(t *testing.T) blob.Store) {
	seed := func(t *testing.T) (blob.Store, bool) {
		s := newStore(t)
		ctx := t.Context()
		for _, k := range []string{"t/a", "t/a/b", "t/c"} {
			if _, err := s.Put(ctx, k, []byte("content of "+k), blob.Cond{}); err != nil {
				t.Logf("the store cannot hold t/a and t/a/b at once (Put %q: %v): nothing to clean up", k, err)
				return nil, false
			}
		}
		return s, true
	}
	t.Run("delete", func(t *testing.T) {
		s, seeded := seed(t)
		if !seeded {
			return
		}
		if r := newHandler(t, s).Delete(t.Context(), "/memories/t"); !same(r, ok("Successfully deleted /memories/t")) {
			t.Errorf("delete /memories/t: %s", describe(r))
		}
		if left := keysUnder(t, s, ""); len(left) != 0 {
			t.Errorf("after delete /memories/t the store holds %q", left)
		}
	})
	t.Run("rename", func(t *testing.T) {
		s, seeded := seed(t)
		if !seeded {
			return
		}
		want := "Successfully renamed /memories/t to /memories/u"
		if r := newHandler(t, s).Rename(t.Context(), "/memories/t", "/memories/u"); !same(r, ok(want)) {
			t.Errorf("rename /memories/t: %s", describe(r))
		}
		if left := keysUnder(t, s, "t"); len(left) != 0 {
			t.Errorf("after rename /memories/t the store still holds %q", left)
		}
		for _, k := range []string{"a", "a/b", "c"} {
			if got, want := readFile(t, s, "u/"+k), "content of t/"+k; got != want {
				t.Errorf("u/%s holds %q, want %q", k, got, want)
			}
		}
	})
}

// keysUnder lists every key of s equal to dir or under it ("" for all).
func keysUnder(t *testing.T, s blob.Store, dir string) []string {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	var keys []string
	if dir != "" {
		if _, err := s.Stat(ctx, dir); err == nil {
			keys = append(keys, dir)
		}
	}
	infos, err := blob.ListAll(ctx, s, blob.Dir(dir))
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, info := range infos {
		keys = append(keys, info.Key)
	}
	return keys
}
