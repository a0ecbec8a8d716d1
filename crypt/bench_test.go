package crypt_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
)

// The benchmarks measure what encryption adds to the two commonest memory
// commands on a 2 KB file: view (one Get) and str_replace (Get, then
// Put(IfVersion)). Compare each crypt case with the mem case, and
// crypt-x25519-over-file with file (a view reads the same version again, so
// after the first read it costs no key agreement):
//
//	go test ./crypt -run '^$' -bench . -benchmem

func benchStores(b *testing.B) map[string]blob.Store {
	return map[string]blob.Store{
		"mem":                    mem.New(nil),
		"crypt-x25519":           mustWrap(b, mem.New(nil), newConfig(b, crypt.GenerateIdentity)),
		"crypt-postquantum":      mustWrap(b, mem.New(nil), newConfig(b, crypt.GenerateHybridIdentity)),
		"file":                   fileStore(b),
		"crypt-x25519-over-file": mustWrap(b, fileStore(b), newConfig(b, crypt.GenerateIdentity)),
	}
}

func fileStore(b *testing.B) blob.Store {
	s, err := file.Open(b.Context(), b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { blob.Close(s) })
	return s
}

var memoryFile = bytes.Repeat([]byte("- the user likes short answers\n"), 2048/31+1)[:2048]

func BenchmarkView(b *testing.B) {
	for name, s := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			if _, err := s.Put(b.Context(), "notes/prefs.md", memoryFile, blob.Cond{}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(memoryFile)))
			for b.Loop() {
				if _, _, err := s.Get(b.Context(), "notes/prefs.md", blob.MaxObjectBytes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkStrReplace(b *testing.B) {
	for name, s := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			if _, err := s.Put(b.Context(), "notes/prefs.md", memoryFile, blob.Cond{}); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(memoryFile)))
			for b.Loop() {
				data, info, err := s.Get(b.Context(), "notes/prefs.md", blob.MaxObjectBytes)
				if err != nil {
					b.Fatal(err)
				}
				data = bytes.Replace(data, []byte("short"), []byte("brief"), 1)
				if _, err := s.Put(b.Context(), "notes/prefs.md", data, blob.Cond{IfVersion: info.Version}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkViewOverFileInterleaved reads the same 2 KB file from a plain
// local-directory store and through the encrypting store over another,
// alternately in each iteration, so that both see the same machine load;
// it reports each one's median time and their ratio (the target: at most 2
// after the first read).
func BenchmarkViewOverFileInterleaved(b *testing.B) {
	plain := fileStore(b)
	enc := mustWrap(b, fileStore(b), newConfig(b, crypt.GenerateIdentity))
	stores := []blob.Store{plain, enc}
	for _, s := range stores {
		if _, err := s.Put(b.Context(), "notes/prefs.md", memoryFile, blob.Cond{}); err != nil {
			b.Fatal(err)
		}
		if _, _, err := s.Get(b.Context(), "notes/prefs.md", blob.MaxObjectBytes); err != nil { // the first read
			b.Fatal(err)
		}
	}
	interleavedViews(b, stores, nil)
}

// BenchmarkViewAfterWriteInterleaved writes the 2 KB file, untimed, then
// reads it back, timed, on a plain local-directory store and through the
// encrypting store over another, alternately in each iteration; it reports
// each one's median read and their ratio (the target: at most 1.5). Every
// write makes a new version, whose file key the encrypting store
// remembers from its own write.
func BenchmarkViewAfterWriteInterleaved(b *testing.B) {
	plain := fileStore(b)
	enc := mustWrap(b, fileStore(b), newConfig(b, crypt.GenerateIdentity))
	stores := []blob.Store{plain, enc}
	interleavedViews(b, stores, func(s blob.Store) {
		if _, err := s.Put(b.Context(), "notes/prefs.md", memoryFile, blob.Cond{}); err != nil {
			b.Fatal(err)
		}
	})
}

// interleavedViews reads notes/prefs.md from stores[0] (plain) and
// stores[1] (encrypted), alternately in each iteration, after the untimed
// before (nil: none), and reports each one's median read and their ratio.
func interleavedViews(b *testing.B, stores []blob.Store, before func(blob.Store)) {
	var times [2][]time.Duration
	for b.Loop() {
		for i, s := range stores {
			if before != nil {
				b.StopTimer()
				before(s)
				b.StartTimer()
			}
			start := time.Now()
			if _, _, err := s.Get(b.Context(), "notes/prefs.md", blob.MaxObjectBytes); err != nil {
				b.Fatal(err)
			}
			times[i] = append(times[i], time.Since(start))
		}
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Nanoseconds())
	}
	p, e := median(times[0]), median(times[1])
	b.ReportMetric(p, "plain-ns/view")
	b.ReportMetric(e, "age-ns/view")
	b.ReportMetric(e/p, "ratio")
}
