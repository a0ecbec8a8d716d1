package dirsync_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/dirsync"
)

// Two machines keep one memory folder in step through a shared store.
func Example() {
	ctx := context.Background()
	store := mem.New(nil) // in production: storeurl.Open(ctx, "s3://bucket/alice?encrypt=age&...")

	work, err := os.MkdirTemp("", "dirsync-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	laptop := filepath.Join(work, "laptop")
	desktop := filepath.Join(work, "desktop")
	for _, dir := range []string{laptop, desktop} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(laptop, "MEMORY.md"), []byte("- prefers tabs\n"), 0o600); err != nil {
		log.Fatal(err)
	}

	rep, err := dirsync.Sync(ctx, laptop, store, dirsync.Options{
		StateFile: filepath.Join(work, "laptop.state"), Machine: "laptop",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Summary())

	rep, err = dirsync.Sync(ctx, desktop, store, dirsync.Options{
		StateFile: filepath.Join(work, "desktop.state"), Machine: "desktop",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Summary())
	data, err := os.ReadFile(filepath.Join(desktop, "MEMORY.md"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(data))
	// Output:
	// sync: 1 file, 1 uploaded, 0 downloaded, 0 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed
	// sync: 1 file, 0 uploaded, 1 downloaded, 0 deleted in the store, 0 deleted here, 0 conflicts, 0 deletes deferred, 0 skipped, 0 failed
	// - prefers tabs
}
