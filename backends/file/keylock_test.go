//go:build unix

package file_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/file"
	"github.com/cloudmem/cloudmem/blob"
)

// TestLockExcludes: a key's lock excludes another store (another process,
// as far as flock can tell) locking the same key until it is released, and
// does not hold up a key with another lock file; a cut-short wait holds
// nothing afterwards.
func TestLockExcludes(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	const key = "notes/a.md"
	other := "notes/b.md"
	for i := 0; file.KeyLockName(other) == file.KeyLockName(key); i++ {
		other = fmt.Sprintf("notes/b%d.md", i)
	}
	unlock, err := blob.Lock(t.Context(), a, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := blob.Lock(ctx, b, key); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock of a held key: %v, want DeadlineExceeded", err)
	}
	unlockOther, err := blob.Lock(t.Context(), b, other)
	if err != nil {
		t.Fatalf("Lock of another key while the first is held: %v", err)
	}
	unlockOther()

	got := make(chan error, 1)
	go func() {
		u, err := blob.Lock(t.Context(), b, key)
		if err == nil {
			u()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second Lock returned (%v) while the first was held", err)
	case <-time.After(20 * time.Millisecond):
	}
	unlock()
	unlock() // harmless
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the second Lock after the release: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the second Lock did not get the released lock")
	}
	// The wait cut short by its deadline above holds nothing now.
	u, err := blob.Lock(ctx, a, key)
	if err == nil {
		u()
		t.Fatal("Lock with a done context succeeded")
	}
	u, err = blob.Lock(t.Context(), a, key)
	if err != nil {
		t.Fatalf("Lock after every holder left: %v", err)
	}
	u()

	if _, err := blob.Lock(t.Context(), a, ".cloudmem-keylocks/000"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("Lock of a reserved name: %v, want ErrInvalidKey", err)
	}
	if got := keys(t, a); len(got) != 0 {
		t.Fatalf("the lock files are listed: %q", got)
	}
}

// appendLocked appends line to key's content under key's lock, the way the
// memory handler edits a file: Get, edit, Put(IfVersion), again on a
// conflict. It returns the conflicts it met.
func appendLocked(ctx context.Context, s blob.Store, key, line string) (conflicts int, err error) {
	unlock, err := blob.Lock(ctx, s, key)
	if err != nil {
		return 0, err
	}
	defer unlock()
	for {
		data, info, err := s.Get(ctx, key, blob.MaxObjectBytes)
		if err != nil {
			return conflicts, err
		}
		_, err = s.Put(ctx, key, append(data, line+"\n"...), blob.Cond{IfVersion: info.Version})
		if !errors.Is(err, blob.ErrPrecondition) {
			return conflicts, err
		}
		conflicts++
	}
}

// TestLockedWritersNeverConflict starts writers, each with a store of its
// own over one directory, all at once (a barrier), each appending lines to
// one file under its lock: every append lands, none meets a conflict.
func TestLockedWritersNeverConflict(t *testing.T) {
	const writers, appends = 32, 8
	dir := t.TempDir()
	mustPut(t, open(t, dir), "log.md", "")
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	var acknowledged, refused, conflicts atomic.Int64
	for w := range writers {
		s := open(t, dir)
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			for i := range appends {
				n, err := appendLocked(t.Context(), s, "log.md", fmt.Sprintf("w%d-%d", w, i))
				conflicts.Add(int64(n))
				if err != nil {
					refused.Add(1)
					t.Errorf("writer %d: %v", w, err)
					continue
				}
				acknowledged.Add(1)
			}
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	data, _, err := open(t, dir).Get(t.Context(), "log.md", blob.MaxObjectBytes)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var want []string
	for w := range writers {
		for i := range appends {
			want = append(want, fmt.Sprintf("w%d-%d", w, i))
		}
	}
	slices.Sort(lines)
	slices.Sort(want)
	if acknowledged.Load() != writers*appends || refused.Load() != 0 || conflicts.Load() != 0 || !slices.Equal(lines, want) {
		t.Fatalf("%d appends acknowledged, %d refused, %d conflicts; %d lines present (want %d, each once, and 0 conflicts)",
			acknowledged.Load(), refused.Load(), conflicts.Load(), len(lines), len(want))
	}
}

// hideLocker hides the store's Locker, so that blob.Lock holds nothing.
type hideLocker struct{ blob.Store }

// BenchmarkContendedEdits measures read-modify-writes (appendLocked: the
// memory handler's edit loop) by 1 writer, by 64 writers on one file and by
// 64 writers on 64 files, each writer with a store of its own over one
// directory, as separate processes would have; and, for comparison, 64
// writers on one file without the key lock. It reports edits per second
// and the conflicts met, and fails on a lost edit.
//
//	go test ./backends/file -run '^$' -bench ContendedEdits -benchtime 2000x
func BenchmarkContendedEdits(b *testing.B) {
	for _, tc := range []struct {
		name           string
		writers, files int
		unlocked       bool
	}{
		{"1-writer", 1, 1, false},
		{"64-writers-1-file", 64, 1, false},
		{"64-writers-64-files", 64, 64, false},
		{"64-writers-1-file-unlocked", 64, 1, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			ctx := b.Context()
			stores := make([]blob.Store, tc.writers)
			for i := range stores {
				s, err := file.Open(ctx, dir, nil)
				if err != nil {
					b.Fatal(err)
				}
				if tc.unlocked {
					s = hideLocker{s}
				}
				stores[i] = s
			}
			for f := range tc.files {
				if _, err := stores[0].Put(ctx, fmt.Sprintf("f%d.md", f), nil, blob.Cond{}); err != nil {
					b.Fatal(err)
				}
			}
			var next, conflicts atomic.Int64
			start := make(chan struct{})
			var done sync.WaitGroup
			for w, s := range stores {
				done.Add(1)
				go func() {
					defer done.Done()
					<-start
					for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
						c, err := appendLocked(ctx, s, fmt.Sprintf("f%d.md", w%tc.files), fmt.Sprintf("e%d", n))
						conflicts.Add(int64(c))
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			b.ResetTimer()
			close(start)
			done.Wait()
			b.StopTimer()
			lines := 0
			for f := range tc.files {
				data, _, err := stores[0].Get(ctx, fmt.Sprintf("f%d.md", f), blob.MaxObjectBytes)
				if err != nil {
					b.Fatal(err)
				}
				lines += strings.Count(string(data), "\n")
			}
			if lines != b.N {
				b.Fatalf("%d edits made, %d lines present", b.N, lines)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "edits/s")
			b.ReportMetric(float64(conflicts.Load()), "conflicts")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// TestLockDirectory: the key locks' directory is made on first use with
// mode 0700 (whatever the umask), made again if someone removed it, and
// never followed when it is a symbolic link: the lock fails and nothing is
// created where the link points.
func TestLockDirectory(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	lockDir := filepath.Join(dir, ".cloudmem-keylocks")
	lock := func() error {
		unlock, err := blob.Lock(t.Context(), s, "notes/a.md")
		if err == nil {
			unlock()
		}
		return err
	}
	wantDir := func(when string) {
		t.Helper()
		st, err := os.Lstat(lockDir)
		if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
			t.Fatalf("%s: the lock directory is %v (%v), want a directory with mode 0700", when, st.Mode(), err)
		}
	}
	old := syscall.Umask(0)
	err := lock()
	syscall.Umask(old)
	if err != nil {
		t.Fatalf("the first Lock: %v", err)
	}
	wantDir("after the first Lock")
	if err := lock(); err != nil {
		t.Fatalf("Lock with the directory there: %v", err)
	}
	if err := os.RemoveAll(lockDir); err != nil {
		t.Fatal(err)
	}
	if err := lock(); err != nil {
		t.Fatalf("Lock after the directory was removed: %v", err)
	}
	wantDir("after it was removed and locked again")

	elsewhere := t.TempDir()
	if err := os.RemoveAll(lockDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, lockDir); err != nil {
		t.Fatal(err)
	}
	if err := lock(); err == nil {
		t.Fatal("Lock through a symbolic link succeeded")
	}
	if entries, err := os.ReadDir(elsewhere); err != nil || len(entries) != 0 {
		t.Fatalf("the link's target holds %v (%v), want nothing", entries, err)
	}
}
