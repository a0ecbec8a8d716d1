package azure_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cloudmem/cloudmem/backends/azure"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Open a store under a prefix of a container. With no connection string in
// AZURE_STORAGE_CONNECTION_STRING, the credentials come from
// DefaultAzureCredential (managed identity, workload identity, Azure CLI).
// (Compiled, not run: it needs a storage account.)
func Example() {
	ctx := context.Background()
	store, err := azure.Open(ctx, "memories", "agents/agent-1", &azure.Options{Account: "mystorageaccount"})
	if err != nil {
		log.Fatal(err)
	}
	// Blob "agents/agent-1/notes.md", created only if absent.
	info, err := store.Put(ctx, "notes.md", []byte("# Notes\n"), blob.Cond{IfAbsent: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Key, info.Size)
}

// Open the same kind of store from a URL, here on a local Azurite, whose
// connection string is in AZURE_STORAGE_CONNECTION_STRING.
func Example_url() {
	ctx := context.Background()
	store, err := storeurl.Open(ctx, "azblob://cloudmem-test/agent1")
	if err != nil {
		log.Fatal(err)
	}
	data, _, err := store.Get(ctx, "notes.md", blob.MaxObjectBytes)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", data)
}
