package mem_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/backends/mem"
	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/blob/blobtest"
)

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return mem.New(nil) })
}

// TestOptionsNow checks that Info.Modified comes from Options.Now, through
// New and through Open.
func TestOptionsNow(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	opts := &mem.Options{Now: func() time.Time { return at }}
	opened, err := mem.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	for name, s := range map[string]blob.Store{"New": mem.New(opts), "Open": opened} {
		info, err := s.Put(context.Background(), "a", []byte("x"), blob.Cond{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !info.Modified.Equal(at) {
			t.Errorf("%s: Modified = %v, want %v", name, info.Modified, at)
		}
	}
}

// A conditional write: the second create of one key loses.
func Example() {
	ctx := context.Background()
	s := mem.New(nil)
	if _, err := s.Put(ctx, "notes/a.md", []byte("first"), blob.Cond{IfAbsent: true}); err != nil {
		fmt.Println(err)
	}
	_, err := s.Put(ctx, "notes/a.md", []byte("second"), blob.Cond{IfAbsent: true})
	fmt.Println(err)
	data, _, _ := s.Get(ctx, "notes/a.md", blob.MaxObjectBytes)
	fmt.Printf("%s\n", data)
	// Output:
	// mem: "notes/a.md": blob: precondition failed
	// first
}
