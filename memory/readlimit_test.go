package memory_test

import (
	"context"
	"errors"
	"log/slog"
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
