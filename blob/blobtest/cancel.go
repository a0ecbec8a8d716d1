package blobtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
)

var cancelTests = []test{
	{"CancelledContext", testCancelledContext},
}

// prompt bounds how long a call with a cancelled context may take. It is
// generous: it catches hangs and retry loops, not slowness.
const prompt = 5 * time.Second

func testCancelledContext(t *testing.T, s blob.Store) {
	v := put(t, s, "k", []byte("kept")).Version
	put(t, s, "dir/a", []byte("a"))
	ctx := cancelled(t)
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Get", func(ctx context.Context) error { _, _, err := s.Get(ctx, "k", blob.MaxObjectBytes); return err }},
		{"Stat", func(ctx context.Context) error { _, err := s.Stat(ctx, "k"); return err }},
		{"Put", func(ctx context.Context) error { _, err := s.Put(ctx, "k", []byte("new"), blob.Cond{}); return err }},
		{"Put new key", func(ctx context.Context) error { _, err := s.Put(ctx, "new", []byte("new"), blob.Cond{}); return err }},
		{"Put(IfAbsent)", func(ctx context.Context) error {
			_, err := s.Put(ctx, "new", []byte("new"), blob.Cond{IfAbsent: true})
			return err
		}},
		{"Put(IfVersion)", func(ctx context.Context) error {
			_, err := s.Put(ctx, "k", []byte("new"), blob.Cond{IfVersion: v})
			return err
		}},
		{"Delete", func(ctx context.Context) error { return s.Delete(ctx, "k", blob.Cond{}) }},
		{"Delete(IfVersion)", func(ctx context.Context) error { return s.Delete(ctx, "k", blob.Cond{IfVersion: v}) }},
		{"List", func(ctx context.Context) error {
			for _, err := range s.List(ctx, "") {
				if err != nil {
					return err
				}
			}
			return errors.New("List yielded no error")
		}},
		{"Rename file", func(ctx context.Context) error { return blob.Rename(ctx, s, "k", "moved") }},
		{"Rename tree", func(ctx context.Context) error { return blob.Rename(ctx, s, "dir", "moved") }},
		{"DeleteTree", func(ctx context.Context) error { return blob.DeleteTree(ctx, s, "dir") }},
	}
	for _, c := range calls {
		start := time.Now()
		err := c.call(ctx)
		if took := time.Since(start); took > prompt {
			t.Errorf("%s with a cancelled context took %v", c.name, took)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: error = %v, want one wrapping context.Canceled", c.name, err)
		}
	}
	// Nothing was written, moved or deleted.
	if got := wantContent(t, s, "k", []byte("kept")); got.Version != v {
		t.Fatalf("version of k changed from %q to %q", v, got.Version)
	}
	wantContent(t, s, "dir/a", []byte("a"))
	wantKeys(t, s, "", "dir/a", "k")
}
