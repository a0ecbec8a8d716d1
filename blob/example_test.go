package blob_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
)

// Example shows the contract every store keeps: conditional writes decided
// by the store, bounded reads, and the capability functions that fall back
// to the core methods.
func Example() {
	ctx := context.Background()
	s := mem.New(nil)

	// IfAbsent: of two creators, only the first succeeds.
	first, err := s.Put(ctx, "notes/todo.md", []byte("buy milk\n"), blob.Cond{IfAbsent: true})
	fmt.Println("create:", err)
	_, err = s.Put(ctx, "notes/todo.md", []byte("other\n"), blob.Cond{IfAbsent: true})
	fmt.Println("create again:", errors.Is(err, blob.ErrPrecondition))

	// IfVersion: an edit of the version read wins; a stale one is refused.
	_, err = s.Put(ctx, "notes/todo.md", []byte("buy milk\nbuy tea\n"), blob.Cond{IfVersion: first.Version})
	fmt.Println("edit:", err)
	_, err = s.Put(ctx, "notes/todo.md", []byte("lost\n"), blob.Cond{IfVersion: first.Version})
	fmt.Println("stale edit:", errors.Is(err, blob.ErrPrecondition))

	// Get reads at most limit bytes; a larger object is refused unread.
	data, _, err := s.Get(ctx, "notes/todo.md", 100)
	fmt.Printf("get: %q %v\n", data, err)
	_, _, err = s.Get(ctx, "notes/todo.md", 8)
	var tl *blob.TooLargeError
	if errors.As(err, &tl) {
		fmt.Printf("get with limit 8: %d bytes, over %d\n", tl.Size, tl.Limit)
	}

	// Rename moves a tree, natively or by copying.
	err = blob.Rename(ctx, s, "notes", "archive")
	fmt.Println("rename:", err)
	infos, _ := blob.ListAll(ctx, s, "")
	for _, info := range infos {
		fmt.Println(info.Key, info.Size)
	}
	// Output:
	// create: <nil>
	// create again: true
	// edit: <nil>
	// stale edit: true
	// get: "buy milk\nbuy tea\n" <nil>
	// get with limit 8: 17 bytes, over 8
	// rename: <nil>
	// archive/todo.md 17
}
