package s3_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cloudmem/cloudmem/backends/s3"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Open a store under a prefix of an AWS bucket. Credentials come from the
// SDK's chain; the region from Options, else from AWS_REGION or the shared
// config. (Compiled, not run: it needs a bucket.)
func Example() {
	ctx := context.Background()
	store, err := s3.Open(ctx, "my-bucket", "agents/agent-1", &s3.Options{Region: "eu-west-1"})
	if err != nil {
		log.Fatal(err)
	}
	// Object key "agents/agent-1/notes.md", created only if absent.
	info, err := store.Put(ctx, "notes.md", []byte("# Notes\n"), blob.Cond{IfAbsent: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Key, info.Size)
}

// Open the same kind of store from a URL, here on a local MinIO server,
// with the keys in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func Example_url() {
	ctx := context.Background()
	store, err := storeurl.Open(ctx, "s3://cloudmem-test/agent1?endpoint=http://127.0.0.1:9000&path_style=true&region=us-east-1")
	if err != nil {
		log.Fatal(err)
	}
	data, _, err := store.Get(ctx, "notes.md", blob.MaxObjectBytes)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", data)
}
