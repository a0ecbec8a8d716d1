package transfer_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/transfer"
)

// Copy a store to another, verify the copy, then move it through a tar
// stream into a third store.
func Example() {
	ctx := context.Background()
	src, dst, restored := mem.New(nil), mem.New(nil), mem.New(nil)
	for key, text := range map[string]string{"notes/a.md": "alpha\n", "todo.md": "- tea\n", ".cloudmem/crypt-key": "src's own"} {
		if _, err := src.Put(ctx, key, []byte(text), blob.Cond{}); err != nil {
			panic(err)
		}
	}

	stats, err := transfer.Copy(ctx, src, dst, nil)
	fmt.Printf("copy: %+v, %v\n", stats, err)
	v, err := transfer.Verify(ctx, src, dst, nil)
	fmt.Printf("verify: %+v, %v\n", v, err)

	var tarball bytes.Buffer
	exported, err := transfer.Export(ctx, dst, transfer.NewTarWriter(&tarball))
	fmt.Printf("export: %+v, %v\n", exported, err)
	files, err := transfer.ReadTar(&tarball, 0, "")
	if err != nil {
		panic(err)
	}
	imported, err := transfer.Import(ctx, restored, files, nil)
	fmt.Printf("import: %+v, %v\n", imported, err)
	// Output:
	// copy: {Total:2 Copied:2 Skipped:0 Gone:0}, <nil>
	// verify: {Files:2 Extra:0}, <nil>
	// export: {Files:2 Bytes:12}, <nil>
	// import: {New:2 Replaced:0 Unchanged:0 Written:2}, <nil>
}
