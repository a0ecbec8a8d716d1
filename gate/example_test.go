package gate_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/gate"
)

// A Tree refuses by the tree's rules with a typed *gate.Error that says
// what it is about, for its caller (package memory) to word.
func ExampleTree_Create() {
	ctx := context.Background()
	g, err := gate.New(mem.New(nil), gate.Options{MaxFiles: 2, MaxFileBytes: 16})
	if err != nil {
		panic(err)
	}
	for _, key := range []string{"notes/a.md", "notes/a.md/b.md", "big.md", "notes/b.md", "c.md"} {
		data := []byte("tea\n")
		if key == "big.md" {
			data = []byte("far too long for the limit\n")
		}
		_, err := g.Create(ctx, key, data, false)
		var refused *gate.Error
		switch {
		case err == nil:
			fmt.Printf("%s: created\n", key)
		case errors.As(err, &refused) && errors.Is(err, gate.ErrNotDir):
			fmt.Printf("%s: refused, %s is a file\n", key, refused.Key)
		case errors.As(err, &refused) && errors.Is(err, gate.ErrTooLarge):
			fmt.Printf("%s: refused, %d bytes over the limit of %d\n", key, refused.Size, refused.Limit)
		case errors.As(err, &refused) && errors.Is(err, gate.ErrFull):
			fmt.Printf("%s: refused, %d files, the limit is %d\n", key, refused.Size, refused.Limit)
		default:
			fmt.Printf("%s: %v\n", key, err)
		}
	}
	// Output:
	// notes/a.md: created
	// notes/a.md/b.md: refused, notes/a.md is a file
	// big.md: refused, 27 bytes over the limit of 16
	// notes/b.md: created
	// c.md: refused, 2 files, the limit is 2
}
