package search

import (
	"context"

	"github.com/cloudmem/cloudmem/memory"
)

// Observer returns a memory.Observer that tells the index of every writing
// command a Handler runs (see the package documentation), and passes every
// call on to next, which may be nil (package telemetry's Observer, for
// example). Give it to the Handler as Options.Observer. It is safe for
// concurrent use when next is.
func (x *Index) Observer(next memory.Observer) memory.Observer {
	return &observer{x: x, next: next}
}

type observer struct {
	x    *Index
	next memory.Observer
}

type commandKey struct{}

func (o *observer) CommandStart(ctx context.Context, cmd memory.CommandInfo) context.Context {
	ctx = context.WithValue(ctx, commandKey{}, cmd)
	if o.next != nil {
		ctx = o.next.CommandStart(ctx, cmd)
	}
	return ctx
}

func (o *observer) CommandConflict(ctx context.Context, retry bool) {
	if o.next != nil {
		o.next.CommandConflict(ctx, retry)
	}
}

// CommandEnd marks the paths of a writing command changed, whatever its
// result: a failed write may have reached the store, and a re-read of an
// unchanged file costs one Get. A path that does not resolve reached no
// storage.
func (o *observer) CommandEnd(ctx context.Context, res memory.Result) {
	if cmd, ok := ctx.Value(commandKey{}).(memory.CommandInfo); ok && cmd.Name != "view" {
		for _, p := range []string{cmd.Path, cmd.NewPath} {
			if p == "" {
				continue
			}
			if key, err := memory.Resolve(p); err == nil {
				o.x.Changed(key)
			}
		}
	}
	if o.next != nil {
		o.next.CommandEnd(ctx, res)
	}
}
