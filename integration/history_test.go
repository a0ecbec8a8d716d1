package integration

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
	"github.com/cloudmem/cloudmem/history"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/memory/memorytest"
)

// The history wrapper (package history) over every cloud backend: blobtest
// and the SPEC suite pass through it (the model sees the same results as
// without it), with and without encryption beneath it (TestEncryptedHandler
// runs the stack history, crypt, server), and 16 writers racing on one file
// leave exactly one version record per acknowledged edit, replaying to the
// file.

// wrappedSpecSkips are the golden cases a run of the SPEC suite through a
// wrapper over a server leaves to the server's plain run (TestS3Handler,
// TestGCSHandler, TestAzureHandler, TestRedisMemorySpec), which passes them
// on the same server: the 2,000-file case costs 2,000 Puts and 4,000 Gets
// (through history 2,000 Stats and 4,000 Puts more), once per server is
// enough, and the cases with a small MaxFiles prove through the wrapper
// what it changes about the file limit (its records count in no limit).
var wrappedSpecSkips = memorytest.Options{Parallel: true, Skip: map[string]string{
	memorytest.FullStoreCase: "the server's plain SPEC run fills it to the default limit; " +
		"through this wrapper the small-MaxFiles cases prove the limit",
}}

// parallelCases runs the SPEC suite's cases in parallel: each has a bucket,
// container or prefix of its own, and most of a case's time is waiting
// for the server (see TestMain for how many run at once).
var parallelCases = memorytest.Options{Parallel: true}

// historySkips are the blobtest subtests each server cannot prove through
// the wrapper: those it cannot prove without it (the wrapper forwards
// conditions unchanged), and MaxLenKey under a prefix.
var historySkips = map[string]map[string]string{
	"S3":    minioSkips,
	"GCS":   {},
	"Azure": {},
	"Redis": {},
}

// withHistory returns newStore's stores wrapped with history.
func withHistory(newStore func(t *testing.T) blob.Store) func(t *testing.T) blob.Store {
	return func(t *testing.T) blob.Store {
		t.Helper()
		hs, err := history.New(newStore(t), &history.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return hs
	}
}

func TestHistoryOverServers(t *testing.T) {
	for _, cs := range cloudStores {
		t.Run(cs.name, func(t *testing.T) {
			t.Run("blobtest", func(t *testing.T) {
				skip := maps.Clone(historySkips[cs.name])
				skip["ListMany"] = "writes over 1,000 keys, each a Stat, a Put and a record's Put through history: " +
					"minutes on an emulator; the wrapper's List is the server's, filtered, and the server's own " +
					"conformance run proves its paging"
				if cs.name != "Redis" {
					skip["MaxLenKey"] = "under a prefix, keys are shorter by the prefix; the server's own conformance run proves the longest key"
				}
				blobtest.RunWith(t, withHistory(cs.prefixed), blobtest.Options{Skip: skip})
			})
			// The SPEC suite through history runs on every server in
			// TestEncryptedHandler, through history over crypt (the
			// stack of history=on&encrypt=age): one run proves both.
			t.Run("race", func(t *testing.T) { historyRace(t, cs.prefixed(t)) })
		})
	}
}

// historyRace starts 16 writers at once on one file, each with its own
// Handler and history Store over inner (as 16 processes would), and checks
// that the version records are exactly the create plus one per
// acknowledged insert, and that they replay to the file's content.
func historyRace(t *testing.T, inner blob.Store) {
	const writers = 16
	ctx := t.Context()
	newHandler := func() *memory.Handler {
		hs, err := history.New(inner, &history.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		h, err := memory.New(hs, memory.Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if r := newHandler().Create(ctx, "/memories/race.md", ""); r.IsError {
		t.Fatal(r.Text)
	}
	start := make(chan struct{})
	results := make([]memory.Result, writers)
	var wg sync.WaitGroup
	for i := range writers {
		h := newHandler()
		wg.Go(func() {
			<-start
			results[i] = h.Insert(blob.WithActor(ctx, fmt.Sprintf("w%02d", i)), "/memories/race.md", 0, fmt.Sprintf("line %02d\n", i))
		})
	}
	close(start)
	wg.Wait()
	acked, refused := 0, 0
	for i, r := range results {
		switch {
		case !r.IsError:
			acked++
		case strings.Contains(r.Text, "was changed by another writer"):
			refused++
		default:
			t.Errorf("writer %d: %s", i, r.Text)
		}
	}
	data, _, err := inner.Get(ctx, "race.md", blob.MaxObjectBytes)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != acked {
		t.Errorf("the file has %d lines, %d inserts were acknowledged", n, acked)
	}
	records, err := blob.ListAll(ctx, inner, history.Namespace)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1+acked {
		t.Errorf("%d version records, want 1 create + %d acknowledged inserts (%d refused)", len(records), acked, refused)
	}
	hs, err := history.New(inner, nil)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := hs.History(ctx, "race.md")
	if err != nil {
		t.Fatal(err)
	}
	var prev []byte
	for i, v := range vs {
		got, _, err := hs.Show(ctx, "race.md", v.ID)
		if err != nil {
			t.Fatalf("version %d: %v", i, err)
		}
		if i > 0 && (!bytes.HasSuffix(got, prev) || strings.Count(string(got), "\n") != i) {
			t.Fatalf("version %d (%q) does not extend version %d (%q) by one line", i, got, i-1, prev)
		}
		prev = got
	}
	if !bytes.Equal(prev, data) || !vs[len(vs)-1].Current {
		t.Errorf("the last version %q is not the file %q", prev, data)
	}
	t.Logf("%d writers: %d acknowledged, %d refused, %d records", writers, acked, refused, len(records))
}
