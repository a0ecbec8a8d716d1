package memory_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// sizeless is a store that cannot tell an object's size before reading it:
// its over-limit errors say only that the object is over the limit.
type sizeless struct{ blob.Store }

func (s sizeless) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	data, info, err := s.Store.Get(ctx, key, limit)
	if errors.Is(err, blob.ErrTooLarge) {
		return nil, blob.Info{}, &blob.TooLargeError{Key: key, Size: -1, Limit: limit}
	}
	return data, info, err
}

// TestReadLimit: view, str_replace and insert refuse an object over the
// read limit (the larger of MaxFileBytes and MaxImageBytes) with the whole
// text of docs/spec.md "view", "File", in both its forms, with the path as
// sent, and change nothing.
func TestReadLimit(t *testing.T) {
	ctx := t.Context()
	const sized = "Error: File /memories//big.md is 10 bytes, over the limit of 6 bytes that a memory command reads"
	const unsized = "Error: File /memories//big.md is over the limit of 6 bytes that a memory command reads"
	for _, tc := range []struct {
		name string
		wrap func(blob.Store) blob.Store
		want string
	}{
		{"size known", func(s blob.Store) blob.Store { return s }, sized},
		{"size unknown", func(s blob.Store) blob.Store { return sizeless{s} }, unsized},
	} {
		store := mem.New(nil)
		if _, err := store.Put(ctx, "big.md", []byte("0123456789"), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
		h, err := memory.New(tc.wrap(store), memory.Options{MaxFileBytes: 4, MaxImageBytes: 6, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{
			`{"command":"view","path":"/memories//big.md"}`,
			`{"command":"str_replace","path":"/memories//big.md","old_str":"0","new_str":"x"}`,
			`{"command":"insert","path":"/memories//big.md","insert_line":0,"insert_text":"x"}`,
		} {
			got := h.Execute(ctx, []byte(in))
			if got.Text != tc.want || !got.IsError || got.Image != nil || !errors.Is(got.Err, memory.ErrTooLarge) {
				t.Errorf("%s: %s\n got %+v\nwant %q (ErrTooLarge)", tc.name, in, got, tc.want)
			}
		}
		data, _, err := store.Get(ctx, "big.md", 100)
		if err != nil || string(data) != "0123456789" {
			t.Errorf("%s: big.md = %q, %v after refused commands", tc.name, data, err)
		}
	}
}

// limitRecorder is a store without an atomic Rename (so that rename copies key by
// key) that records the largest Get limit asked for.
type limitRecorder struct {
	blob.Store
	most atomic.Int64
}

func (r *limitRecorder) Get(ctx context.Context, key string, limit int64) ([]byte, blob.Info, error) {
	for {
		m := r.most.Load()
		if limit <= m || r.most.CompareAndSwap(m, limit) {
			break
		}
	}
	return r.Store.Get(ctx, key, limit)
}

// TestRenameReadLimit (issue 26, item 1): a rename copying key by key reads
// no more than the read limit: a file, or a file of a directory, over it
// (planted by another program) is refused with the whole text of
// docs/spec.md "view", naming that file, and nothing moves.
func TestRenameReadLimit(t *testing.T) {
	ctx := t.Context()
	inner := mem.New(nil)
	for key, data := range map[string]string{"big.md": "0123456789", "dir/ok.md": "ok", "dir/big.md": "0123456789"} {
		if _, err := inner.Put(ctx, key, []byte(data), blob.Cond{}); err != nil {
			t.Fatal(err)
		}
	}
	store := &limitRecorder{Store: inner}
	h, err := memory.New(store, memory.Options{MaxFileBytes: 4, MaxImageBytes: 6, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"command":"rename","old_path":"/memories/big.md","new_path":"/memories/moved.md"}`,
			"Error: File /memories/big.md is 10 bytes, over the limit of 6 bytes that a memory command reads"},
		{`{"command":"rename","old_path":"/memories/dir","new_path":"/memories/dir2"}`,
			"Error: File /memories/dir/big.md is 10 bytes, over the limit of 6 bytes that a memory command reads"},
	} {
		got := h.Execute(ctx, []byte(tc.in))
		if got.Text != tc.want || !errors.Is(got.Err, memory.ErrTooLarge) {
			t.Errorf("%s\n got %q (%v)\nwant %q (ErrTooLarge)", tc.in, got.Text, got.Err, tc.want)
		}
	}
	if m := store.most.Load(); m > 6 {
		t.Errorf("a Get asked for up to %d bytes; the read limit is 6", m)
	}
	keys, err := blob.ListAll(ctx, inner, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := blob.Keys(keys), []string{"big.md", "dir/big.md", "dir/ok.md"}; !slices.Equal(got, want) {
		t.Errorf("the store holds %q after the refused renames, want %q", got, want)
	}
}
