package blob_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// rewriter is a capability-less store whose Delete first lets a rival
// rewrite the key, as if another agent edited the file in the instant
// between Rename's copy and its delete. It does so `times` times.
type rewriter struct {
	blob.Store
	times int
	edits int
}

func (r *rewriter) Delete(ctx context.Context, key string, c blob.Cond) error {
	if r.edits < r.times {
		r.edits++
		if _, err := r.Store.Put(ctx, key, fmt.Appendf(nil, "edit %d", r.edits), blob.Cond{}); err != nil {
			return err
		}
	}
	return r.Store.Delete(ctx, key, c)
}

// TestRenameFallbackCarriesConcurrentEdit checks that an edit landing on a
// source after it was copied ends up at the destination, not lost and not
// reported as "destination exists".
func TestRenameFallbackCarriesConcurrentEdit(t *testing.T) {
	ctx := context.Background()
	for _, tree := range []bool{false, true} {
		t.Run(fmt.Sprintf("tree=%v", tree), func(t *testing.T) {
			s := &rewriter{Store: mem.New(nil), times: 2}
			src, dst := "a.md", "b.md"
			if tree {
				src, dst = "d", "e"
			}
			key := src
			if tree {
				key = "d/f.md"
			}
			if _, err := s.Put(ctx, key, []byte("original"), blob.Cond{}); err != nil {
				t.Fatal(err)
			}
			if err := blob.Rename(ctx, s, src, dst); err != nil {
				t.Fatalf("Rename = %v, want success", err)
			}
			moved := dst + key[len(src):]
			got, _, err := s.Get(ctx, moved, blob.MaxObjectBytes)
			if err != nil || string(got) != "edit 2" {
				t.Fatalf("Get(%q) = %q, %v; want the last concurrent edit %q", moved, got, err, "edit 2")
			}
			if _, err := s.Stat(ctx, key); !errors.Is(err, blob.ErrNotExist) {
				t.Fatalf("Stat(%q) after the move = %v, want ErrNotExist", key, err)
			}
		})
	}
}

// TestRenameFallbackSourceKeepsChanging checks the bounded case: a source
// rewritten before every delete stays at both keys, with an error that does
// not read as "destination exists", and the latest edit is not lost.
func TestRenameFallbackSourceKeepsChanging(t *testing.T) {
	ctx := context.Background()
	s := &rewriter{Store: mem.New(nil), times: 1 << 30}
	if _, err := s.Put(ctx, "a.md", []byte("original"), blob.Cond{}); err != nil {
		t.Fatal(err)
	}
	err := blob.Rename(ctx, s, "a.md", "b.md")
	if err == nil || errors.Is(err, blob.ErrPrecondition) || errors.Is(err, blob.ErrNotExist) {
		t.Fatalf("Rename = %v, want an error that is neither ErrPrecondition nor ErrNotExist", err)
	}
	src, _, err := s.Get(ctx, "a.md", blob.MaxObjectBytes)
	if err != nil {
		t.Fatalf("source lost: %v", err)
	}
	if want := fmt.Sprintf("edit %d", s.edits); string(src) != want {
		t.Fatalf("source = %q, want the latest edit %q", src, want)
	}
	if _, err := s.Stat(ctx, "b.md"); err != nil {
		t.Fatalf("copy lost: %v", err)
	}
}
