package crypt_test

import (
	"bytes"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/crypt"
)

// The benchmarks measure what encryption adds to the two commonest memory
// commands on a 2 KB file: view (one Get) and str_replace (Get, then
// Put(IfVersion)). Compare each crypt case with the mem case:
//
//	go test ./crypt -run '^$' -bench . -benchmem

func benchStores(b *testing.B) map[string]blob.Store {
	return map[string]blob.Store{
		"mem":               mem.New(nil),
		"crypt-x25519":      mustWrap(b, mem.New(nil), newConfig(b, crypt.GenerateIdentity)),
		"crypt-postquantum": mustWrap(b, mem.New(nil), newConfig(b, crypt.GenerateHybridIdentity)),
	}
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
