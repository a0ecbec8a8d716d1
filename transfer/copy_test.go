package transfer

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// manyFiles returns n files spread over nested directories, each with its
// own content (some empty, some binary, some over 64 KiB).
func manyFiles(n int) map[string]string {
	files := make(map[string]string, n)
	for i := range n {
		key := fmt.Sprintf("agent-%d/topic-%02d/note-%04d.md", i%7, i%23, i)
		content := fmt.Sprintf("note %d\n%s", i, strings.Repeat("x", i%300))
		switch {
		case i%500 == 0:
			content = ""
		case i%333 == 0:
			content = string([]byte{0, 0xff, byte(i), '\n'})
		case i == 1234:
			content = strings.Repeat("big ", 20_000)
		}
		files[key] = content
	}
	return files
}

// storeWith returns an in-memory store holding files (key → content).
func storeWith(t *testing.T, files map[string]string) blob.Store {
	t.Helper()
	s := mem.New(nil)
	for key, content := range files {
		if _, err := s.Put(context.Background(), key, []byte(content), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// contents returns every memory file of s (no reserved bookkeeping key).
func contents(t *testing.T, s blob.Store) map[string]string {
	t.Helper()
	infos, err := blob.ListAll(context.Background(), s, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, info := range infos {
		if blob.IsReserved(info.Key) { // bookkeeping: the file count
			continue
		}
		data, _, err := s.Get(context.Background(), info.Key, blob.MaxObjectBytes)
		if err != nil {
			t.Fatal(err)
		}
		out[info.Key] = string(data)
	}
	return out
}

// cancelAfter is a Store that cancels a context once n Puts of memory
// files have succeeded: an interruption in the middle of a copy.
type cancelAfter struct {
	blob.Store
	n      int64
	puts   atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelAfter) Put(ctx context.Context, key string, data []byte, cond blob.Cond) (blob.Info, error) {
	info, err := c.Store.Put(ctx, key, data, cond)
	if err == nil && !blob.IsReserved(key) && c.puts.Add(1) == c.n {
		c.cancel()
	}
	return info, err
}

// TestCopyResume interrupts a copy after 40 files and runs it again: the
// second run copies exactly what the first did not, and skips the rest.
func TestCopyResume(t *testing.T) {
	ctx := context.Background()
	src, dst := mem.New(nil), mem.New(nil)
	for key, content := range manyFiles(300) {
		if _, err := src.Put(ctx, key, []byte(content), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	interrupted := &cancelAfter{Store: dst, n: 40, cancel: cancel}
	stats, err := Copy(cctx, src, interrupted, &CopyOptions{Jobs: 8})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted copy: %v; want context.Canceled", err)
	}
	there, err := blob.ListAll(ctx, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	there = slices.DeleteFunc(there, func(info blob.Info) bool { return blob.IsReserved(info.Key) })
	// The creates in flight when the copy is cancelled are withdrawn (a
	// failed create leaves no file), so DST may hold fewer than 40.
	if len(there) < 1 || len(there) >= 300 || stats.Copied != len(there) {
		t.Fatalf("the interrupted copy reports %d copied, and DST holds %d files; want the same number, from 1 to 299", stats.Copied, len(there))
	}

	var calls []CopyStats
	stats, err = Copy(ctx, src, dst, &CopyOptions{Jobs: 8, Progress: func(s CopyStats) { calls = append(calls, s) }})
	want := CopyStats{Total: 300, Copied: 300 - len(there), Skipped: len(there)}
	if err != nil || stats != want {
		t.Fatalf("resumed copy = %+v, %v; want %+v", stats, err, want)
	}
	if len(calls) != 300 || calls[299] != want {
		t.Errorf("progress was called %d times, last with %+v; want 300 times, last with %+v", len(calls), calls[len(calls)-1], want)
	}
	v, err := Verify(ctx, src, dst, &VerifyOptions{Jobs: 4})
	if err != nil || v.Files != 300 || v.Extra != 0 {
		t.Errorf("verify after the resumed copy = %+v, %v", v, err)
	}
}

// TestCopyEmptySource checks that a source without a memory file (only
// reserved keys) is ErrEmptySource and that nothing is written.
func TestCopyEmptySource(t *testing.T) {
	src := storeWith(t, map[string]string{".cloudmem/crypt-key": "the source's own"})
	dst := mem.New(nil)
	stats, err := Copy(context.Background(), src, dst, nil)
	if !errors.Is(err, ErrEmptySource) || stats != (CopyStats{}) {
		t.Errorf("Copy of an empty source = %+v, %v; want ErrEmptySource", stats, err)
	}
	if got := contents(t, dst); len(got) != 0 {
		t.Errorf("the destination holds %q, want nothing", got)
	}
}

// TestCopyProblems checks the problems Copy reports and what it leaves.
func TestCopyProblems(t *testing.T) {
	ctx := context.Background()
	src := storeWith(t, map[string]string{"a.md": "new", "b.md": "b", "c.md": "c"})
	dst := storeWith(t, map[string]string{"a.md": "old", "c.md": "c"})
	stats, err := Copy(ctx, src, dst, nil)
	pe, ok := errors.AsType[*ProblemsError](err)
	want := []Problem{{Key: "a.md", Reason: "the destination holds other content", Kind: ErrDiffers}}
	if !ok || !errors.Is(err, ErrProblems) || !slices.Equal(pe.Problems, want) ||
		stats != (CopyStats{Total: 3, Copied: 1, Skipped: 1}) {
		t.Fatalf("Copy = %+v, %v; want 1 copied, 1 skipped and the problem %v", stats, err, want)
	}
	if got := err.Error(); got != "transfer: a.md: the destination holds other content" {
		t.Errorf("the error says %q", got)
	}
	stats, err = Copy(ctx, src, dst, &CopyOptions{Overwrite: true, Jobs: 1})
	if err != nil || stats != (CopyStats{Total: 3, Copied: 1, Skipped: 2}) {
		t.Fatalf("Copy with Overwrite = %+v, %v", stats, err)
	}
	if got, want := contents(t, dst), map[string]string{"a.md": "new", "b.md": "b", "c.md": "c"}; !mapsEqual(got, want) {
		t.Errorf("the destination holds %q, want %q", got, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// alter is a Store whose Get returns other bytes for one key, and none for
// another.
type alter struct {
	blob.Store
	changed, gone string
}

func (a alter) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	data, info, err := a.Store.Get(ctx, key, limit)
	switch key {
	case a.changed:
		data = append(data, '!')
	case a.gone:
		return nil, blob.Info{}, fmt.Errorf("alter: %w", blob.ErrNotExist)
	}
	return data, info, err
}

func TestVerifyCopy(t *testing.T) {
	ctx := context.Background()
	src, dst := mem.New(nil), mem.New(nil)
	for _, key := range []string{"a", "b", "c", "d", ".cloudmem/k"} {
		for _, s := range []blob.Store{src, dst} {
			if _, err := s.Put(ctx, key, []byte(key), blob.Cond{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := dst.Delete(ctx, "d", blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.Put(ctx, "e", nil, blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	var done []int
	v, err := Verify(ctx, src, alter{Store: dst, changed: "b", gone: "c"}, &VerifyOptions{Jobs: 2, Progress: func(n, total int) {
		if total != 3 {
			t.Errorf("progress total %d, want 3", total)
		}
		done = append(done, n)
	}})
	a, b := sha256.Sum256([]byte("b")), sha256.Sum256([]byte("b!"))
	want := []Problem{
		{Key: "b", Reason: fmt.Sprintf("SHA-256 %x in the source, %x in the destination", a[:8], b[:8]), Kind: ErrMismatch},
		{Key: "c", Reason: "deleted from the destination while verifying", Kind: ErrMismatch},
		{Key: "d", Reason: "missing from the destination", Kind: ErrMismatch},
	}
	pe, ok := errors.AsType[*ProblemsError](err)
	if !ok || v != (VerifyStats{Files: 4, Extra: 1}) || !slices.Equal(pe.Problems, want) {
		t.Errorf("Verify = %+v, %v\nwant %+v and the problems %v", v, err, VerifyStats{Files: 4, Extra: 1}, want)
	}
	if !slices.Equal(done, []int{1, 2, 3}) {
		t.Errorf("progress calls %v, want [1 2 3]", done)
	}
}

func TestForEach(t *testing.T) {
	items := make([]int, 100)
	for i := range items {
		items[i] = i
	}
	var (
		mu            sync.Mutex
		seen          []int
		running, most atomic.Int64
	)
	err := forEach(context.Background(), 4, items, func(_ context.Context, i int) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(time.Millisecond)
		mu.Lock()
		seen = append(seen, i)
		mu.Unlock()
		return nil
	})
	slices.Sort(seen)
	if err != nil || !slices.Equal(seen, items) || most.Load() > 4 {
		t.Errorf("forEach = %v, saw %d items, at most %d at a time; want nil, 100, 4", err, len(seen), most.Load())
	}

	boom := errors.New("boom")
	var calls atomic.Int64
	err = forEach(context.Background(), 2, items, func(ctx context.Context, i int) error {
		calls.Add(1)
		if i == 10 {
			return boom
		}
		return ctx.Err()
	})
	if !errors.Is(err, boom) || calls.Load() == 100 {
		t.Errorf("forEach with a failing call = %v after %d calls; want boom, before the 100th", err, calls.Load())
	}
}
