package redis_test

import (
	"context"
	"fmt"
	"io"
	"log"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/backends/redis"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Open a store over a client the application already has. (This example
// needs a Redis server, so go test compiles it but does not run it.)
func ExampleOpen() {
	ctx := context.Background()
	client := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:6379", ContextTimeoutEnabled: true})
	defer client.Close()

	store, err := redis.Open(ctx, client, &redis.Options{Prefix: "agents/agent-7"})
	if err != nil {
		log.Fatal(err)
	}
	info, err := store.Put(ctx, "notes/today.md", []byte("remember the milk"), blob.Cond{IfAbsent: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Key, info.Size)
}

// Open a store from a configuration string. The password may come from
// the REDIS_PASSWORD environment variable instead of the URL.
func Example_url() {
	ctx := context.Background()
	store, err := storeurl.Open(ctx, "redis://127.0.0.1:6379/0?prefix=agent1")
	if err != nil {
		log.Fatal(err)
	}
	if c, ok := store.(io.Closer); ok { // a store opened from a URL owns its client
		defer c.Close()
	}

	infos, err := blob.ListAll(ctx, store, "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(infos), "files")
}
