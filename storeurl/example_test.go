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
	// storeurl: readonly="maybe": want true, false, 1 or 0
}

// A backend names its own parameters in its Backend; storeurl.Open checks
// every URL of its scheme against them, removes the shared ones, and hands
// the backend's Open the parsed Location. Here a made-up "scratch" backend
// takes one parameter of its own, "label". A backend package registers it
// from init:
//
//	func init() { storeurl.Register("scratch", scratch) }
//
// Parse shows what its Open would receive, without opening anything.
func ExampleBackend_Parse() {
	scratch := storeurl.Backend{
		Params: []string{"label"},
		Open: func(ctx context.Context, loc *storeurl.Location) (blob.Store, error) {
			return mem.New(nil), nil
		},
	}
	for _, raw := range []string{"scratch://box?label=x&timeout=5s&readonly=1", "scratch://?lable=x&colour=red"} {
		u, err := url.Parse(raw)
		if err != nil {
			fmt.Println(err)
			return
		}
		loc, err := scratch.Parse(u)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(loc.URL, loc.Params.Get("label"), loc.Timeout)
	}
	// Output:
	// scratch://box?label=x x 5s
	// storeurl: scratch: unknown URL parameters "colour", "lable" (scratch accepts: label; every scheme accepts: age_identity_file, age_key_fingerprint, age_recipients, encrypt, max_file_bytes, max_files, policy, prefix, readonly, secrets, timeout, view_limit)
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
