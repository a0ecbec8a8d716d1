package gcs_test

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/cloudmem/cloudmem/backends/gcs"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Open a store over the objects under agents/alice/ in a bucket. The
// credentials are Application Default Credentials; with
// STORAGE_EMULATOR_HOST=127.0.0.1:4443 set, the store talks to an emulator
// instead, without credentials. (Not run: it needs a server.)
func Example() {
	ctx := context.Background()
	s, err := gcs.Open(ctx, "my-bucket", "agents/alice", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.(io.Closer).Close()

	// Create a file only if nobody else has: the object
	// agents/alice/notes.md is written with ifGenerationMatch=0.
	info, err := s.Put(ctx, "notes.md", []byte("hello\n"), blob.Cond{IfAbsent: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Key, info.Size)
}

// The same store through a configuration string, as the CLI opens it.
// (Not run: it needs a server.)
func Example_url() {
	ctx := context.Background()
	s, err := storeurl.Open(ctx, "gs://my-bucket/agents/alice")
	if err != nil {
		log.Fatal(err)
	}
	defer s.(io.Closer).Close()
	data, _, err := s.Get(ctx, "notes.md", blob.MaxObjectBytes)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", data)
}
