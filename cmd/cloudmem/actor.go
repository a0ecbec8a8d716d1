package main

import (
	"context"
	"os"
	"os/user"

	"github.com/spf13/cobra"

	"github.com/cloudmem/cloudmem/memory"
)

// addActorFlag adds --actor to cmd, into *actor.
func addActorFlag(cmd *cobra.Command, actor *string) {
	cmd.Flags().StringVar(actor, "actor", "", "the `NAME` the store's history records as the author of the changes (default user@host)")
}

// withActor returns ctx carrying the actor of the commands run with it
// (memory.WithActor): actor when not empty, else defaultActor.
func (a *app) withActor(ctx context.Context, actor string) context.Context {
	if actor == "" {
		actor = defaultActor(a.getenv)
	}
	return memory.WithActor(ctx, actor)
}

// defaultActor is user@host: the login name (of the process's user, else
// $USER) and the host name, each "unknown" when it cannot be found.
func defaultActor(getenv func(string) string) string {
	name := getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return name + "@" + host
}
