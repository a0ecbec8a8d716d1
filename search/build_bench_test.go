package search

import (
	"syscall"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/internal/corpus"
)

// BenchmarkIndexTexts measures the indexing of a build without the reads:
// the 2,000 corpus files of BenchmarkTargets, already in memory, analysed
// one after the other and put into new postings together, as a build does.
// Profile it with
//
//	go test -run '^$' -bench IndexTexts -cpuprofile cpu.out ./search/
func BenchmarkIndexTexts(b *testing.B) {
	files := corpus.Files(2000, 10_000)
	bytes := 0
	for _, f := range files {
		bytes += len(f.Text)
	}
	b.SetBytes(int64(bytes))
	b.ReportAllocs()
	var cpu time.Duration
	for b.Loop() {
		c0 := processCPU(b)
		p := newPostings()
		done := make([]parsed, len(files))
		for i, f := range files {
			done[i] = parsed{f.Key, "v", f.Text, analyse(f.Text, p.dict)}
		}
		p.putAll(done)
		cpu += processCPU(b) - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// processCPU is the CPU time the process has used (user and system): on a
// shared machine, unlike the wall clock, it does not count the time other
// programs held the cores.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
