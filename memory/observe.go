package memory

import "context"

// Observer watches the commands a Handler runs, for tracing and metrics
// (package telemetry implements it with OpenTelemetry). The Handler calls
// CommandStart once when a command begins, before any storage call;
// CommandConflict each time one of its writes lost a race with another
// writer; and CommandEnd once with the Result it returns. Conflict and End
// receive the context CommandStart returned (Conflict possibly one derived
// from it), and the command's storage calls run under it, so that a span it
// carries becomes their parent.
//
// An Observer must be safe for concurrent use, must return promptly and
// must not retain the Result's Image data. A nil Observer in Options costs
// nothing.
type Observer interface {
	CommandStart(ctx context.Context, cmd CommandInfo) context.Context
	CommandConflict(ctx context.Context, retry bool)
	CommandEnd(ctx context.Context, res Result)
}

// CommandInfo describes a command to an Observer. It holds the paths as
// the model sent them, and none of the content.
type CommandInfo struct {
	// Name is the command ("view", "create", "str_replace", "insert",
	// "delete", "rename"). For input that did not decode it is the
	// "command" field as sent, possibly empty or unknown.
	Name string
	// Path is the path, or for rename the old_path; it may be invalid.
	Path string
	// NewPath is rename's new_path, empty for other commands.
	NewPath string
	// Overwrite reports that create may replace an existing file
	// (Options.Overwrite).
	Overwrite bool
}

// observeStart tells the Observer, if any, that c begins, and returns the
// context to run it under.
func (h *Handler) observeStart(ctx context.Context, c *command) context.Context {
	if h.obs == nil {
		return ctx
	}
	path := c.path
	if c.name == "rename" {
		path = c.oldPath
	}
	return h.obs.CommandStart(ctx, CommandInfo{Name: c.name, Path: path, NewPath: c.newPath, Overwrite: h.overwrite})
}

// observeEnd tells the Observer, if any, that the command of ctx returned res.
func (h *Handler) observeEnd(ctx context.Context, res Result) {
	if h.obs != nil {
		h.obs.CommandEnd(ctx, res)
	}
}

// observed reports a command that ended before it ran (input that did not
// decode) to the Observer, and returns res.
func (h *Handler) observed(ctx context.Context, c *command, res Result) Result {
	if h.obs != nil {
		h.obs.CommandEnd(h.observeStart(ctx, c), res)
	}
	return res
}
