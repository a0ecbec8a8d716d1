package blob_test

import (
	"context"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
)

func TestIsReserved(t *testing.T) {
	cases := map[string]bool{
		"":                     false,
		"notes/a.md":           false,
		".cloudmem":            true,
		".cloudmem/crypt-key":  true,
		"team/.cloudmem/x":     true,
		"team/alice/.cloudmem": true,
		".cloudmem-lock":       true,
		"a/.cloudmem-tmp-1/b":  true,
		// A case-insensitive file system (macOS, Windows) keeps these
		// where it keeps .cloudmem and .cloudmem-lock.
		".CLOUDMEM/files":  true,
		"a/.CloudMem-lock": true,
		".cloudmemX":       false,
		".cloudmem.md":     false,
		"a/b.cloudmem":     false,
		"x.cloudmem-y":     false,
	}
	for key, want := range cases {
		if got := blob.IsReserved(key); got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestActor(t *testing.T) {
	ctx := context.Background()
	if got := blob.Actor(ctx); got != "" {
		t.Fatalf("Actor of a bare context = %q, want empty", got)
	}
	ctx = blob.WithActor(ctx, "session 42")
	if got := blob.Actor(ctx); got != "session 42" {
		t.Fatalf("Actor = %q, want %q", got, "session 42")
	}
	if got := blob.Actor(blob.WithActor(ctx, "")); got != "" {
		t.Fatalf("Actor after WithActor(ctx, \"\") = %q, want empty", got)
	}
}
