package blob

import "context"

// actorKey is the context key under which WithActor stores the actor.
type actorKey struct{}

// WithActor returns a copy of ctx that names who is making the storage calls
// made with it: an agent, a session, a user@host. Layers that record changes
// (the history wrapper, telemetry) read it with Actor. An empty actor means
// "not set".
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// Actor returns the actor set on ctx with WithActor, or "" when none was.
func Actor(ctx context.Context) string {
	a, _ := ctx.Value(actorKey{}).(string)
	return a
}
