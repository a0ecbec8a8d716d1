package memorytest

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// An Exec executes one command input and returns its Result. RunThrough
// calls it instead of h.Execute, to run the golden cases through a layer
// above the handler: a protocol (MCP), a process boundary. h is the handler
// the case configured (its Options, over its store); an Exec that sends the
// input to a handler elsewhere, over the same storage, may ignore it.
type Exec func(ctx context.Context, h *memory.Handler, input []byte) memory.Result

// RunThrough runs cases (Cases, or some of them) each as its own subtest
// named by its Name, on a fresh store from newStore (which must return an
// empty store and arrange its cleanup), sending each input through exec.
// It checks what survives any faithful layer: the whole text (or image) and
// the error flag, the whole store afterwards, and no storage call for the
// errors the contract gives before storage. Result.Err, which no wire form
// carries, is not checked.
func RunThrough(t *testing.T, cases []Case, newStore func(t *testing.T) blob.Store, exec Exec) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { runThrough(t, newStore, c, exec) })
	}
}

func runThrough(t *testing.T, newStore func(t *testing.T) blob.Store, c Case, exec Exec) {
	if c.Want.IsError && c.WantFiles != nil {
		t.Fatalf("memorytest: case %q expects an error and a changed store", c.Name)
	}
	ctx := t.Context()
	base := newStore(t)
	for path, content := range c.Files {
		if _, err := base.Put(ctx, keyOf(t, path), []byte(content), blob.Cond{}); err != nil {
			t.Fatalf("setup: Put %q: %v", path, err)
		}
	}
	before := snapshot(t, base)
	store := base
	if c.Wrap != nil {
		store = c.Wrap(store)
	}
	counter := blob.NewCounter(store)
	opts := c.Options
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h, err := memory.New(counter, opts)
	if err != nil {
		t.Fatalf("memory.New: %v", err)
	}

	got := exec(ctx, h, []byte(c.Input))

	textOK := got.Text == c.Want.Text
	if c.WantPrefix {
		rest, found := strings.CutPrefix(got.Text, c.Want.Text)
		textOK = found && rest != "" && !strings.Contains(rest, "\n")
	}
	if !textOK || !sameImage(got.Image, c.Want.Image) || got.IsError != c.Want.IsError {
		t.Errorf("input %q\n got: %s\nwant: %s (prefix only: %v)%s",
			c.Input, describe(got), describe(c.Want), c.WantPrefix, firstDifference(got.Text, c.Want.Text))
	}
	if refusedBeforeStorage(c.Want) {
		if n := counter.Counts(); n.Total() != 0 {
			t.Errorf("input %q: decoding, read-only and path errors come before any storage call; the store saw %+v", c.Input, n)
		}
	}
	after := snapshot(t, base)
	if c.WantFiles == nil {
		if diff := diffSnapshots(before, after); diff != "" {
			t.Errorf("input %q: the store changed (it must not):\n%s", c.Input, diff)
		}
		return
	}
	want := map[string]string{}
	for path, content := range c.WantFiles {
		want[keyOf(t, path)] = content
	}
	if diff := diffContents(after, want); diff != "" {
		t.Errorf("input %q: store afterwards (by key):\n%s", c.Input, diff)
	}
}
