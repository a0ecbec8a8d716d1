package memorytest

import (
	"context"
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
		t.Run(c.Name, func(t *testing.T) { runCase(t, newStore, c, exec) })
	}
}
