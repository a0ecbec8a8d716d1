package storeurl_test

import (
	"context"
	"fmt"
	"log"
	"net/url"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
	"github.com/cloudmem/cloudmem/storeurl"
)

// Open a store scoped to one agent's keys. In a program the URL comes from
// configuration: a directory, a bucket, a Redis server.
func ExampleOpen() {
	ctx := context.Background()
	s, err := storeurl.Open(ctx, "mem://?prefix=agents/agent-7")
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := s.Put(ctx, "notes/today.md", []byte("remember the milk"), blob.Cond{}); err != nil {
		fmt.Println(err)
		return
	}
	info, err := s.Stat(ctx, "notes/today.md")
	fmt.Println(info.Key, info.Size, err)

	_, err = storeurl.Open(ctx, "mem://?readonly=maybe")
	fmt.Println(err)
	// Output:
	// notes/today.md 17 <nil>
	// storeurl: readonly=maybe: want true, false, 1 or 0
}

// A backend's Open function checks the URL's parameters with CheckParams,
// naming its own; storeurl.Open has already removed the shared ones. Here a
// made-up "scratch" backend takes one parameter of its own, "label". A
// backend package registers such a function from init:
//
//	func init() { storeurl.Register("scratch", storeurl.Backend{Open: open}) }
func ExampleCheckParams() {
	open := func(ctx context.Context, u *url.URL) (blob.Store, error) {
		if err := storeurl.CheckParams(u, "label"); err != nil {
			return nil, err
		}
		return mem.New(nil), nil
	}

	for _, raw := range []string{"scratch://?label=x", "scratch://?lable=x&colour=red"} {
		u, err := url.Parse(raw)
		if err != nil {
			fmt.Println(err)
			return
		}
		_, err = open(context.Background(), u)
		fmt.Println(err)
	}
	// Output:
	// <nil>
	// storeurl: scratch: unknown URL parameters "colour", "lable" (scratch accepts: label; every scheme accepts: age_identity_file, age_key_fingerprint, age_recipients, encrypt, prefix, readonly, timeout)
}

// The README's example: open a store from its URL, put a memory Handler over
// it, and run a command the model sent. The README opens a directory; this
// example uses an in-memory store so that it runs anywhere.
func Example_memoryTool() {
	ctx := context.Background()
	store, err := storeurl.Open(ctx, "mem://?prefix=user-42")
	if err != nil {
		log.Fatal(err)
	}
	h, err := memory.New(store, memory.Options{})
	if err != nil {
		log.Fatal(err)
	}
	// input: the raw JSON "input" of a memory tool_use block.
	input := []byte(`{"command":"create","path":"/memories/todo.md","file_text":"- buy milk\n"}`)
	res := h.Execute(ctx, input)
	// Send the tool_result back: res.Text (or res.Image), with is_error = res.IsError.
	fmt.Println(res.Text, res.IsError)
	// Output: File created successfully at: /memories/todo.md false
}
