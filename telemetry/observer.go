package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cloudmem/cloudmem/memory"
)

// Observer returns the memory.Observer that records a span and metrics for
// every command of the handlers it is given to (memory.Options.Observer).
// The command span is a child of the span in the command's context (the
// agent's tool span) and the parent of the storage spans of a store wrapped
// with Store.
func (in *Instrumentation) Observer() memory.Observer { return (*observer)(in) }

type observer Instrumentation

var _ memory.Observer = (*observer)(nil)

// commandKey is the context key of the running command's state.
type commandKey struct{}

// command is the state of one running command. It is also the context the
// command runs under (its parent's, with the command span), so that
// starting a command allocates one value for both.
type command struct {
	context.Context
	span      trace.Span
	start     time.Time
	index     int // in commands
	overwrite int // 1 when create may overwrite
	retries   int64
}

// Value returns the command itself for commandKey.
func (c *command) Value(key any) any {
	if key == (commandKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// CommandStart starts the command's span.
func (o *observer) CommandStart(ctx context.Context, info memory.CommandInfo) context.Context {
	tr := o.tracing.tracer()
	if tr == nil && !o.commandMetricsOn(ctx) {
		return ctx // nothing to record; Conflict and End find no command
	}
	cmd := &command{start: time.Now(), index: commandIndex(info.Name)}
	if info.Overwrite {
		cmd.overwrite = 1
	}
	opts := o.cmdStart[cmd.index][cmd.overwrite]
	if o.recordPaths && (info.Path != "" || info.NewPath != "") {
		opts = append(opts[:len(opts):len(opts)], trace.WithAttributes(pathAttrs(info)...))
	}
	name := operationName(commands[cmd.index], info.Overwrite)
	cmd.Context, cmd.span = start(tr, ctx, name, opts)
	return cmd
}

// commandMetricsOn reports whether any command instrument records.
func (o *observer) commandMetricsOn(ctx context.Context) bool {
	return o.cmdDuration.Enabled(ctx) || o.conflicts.Enabled(ctx) || o.retries.Enabled(ctx) || o.gaveUp.Enabled(ctx)
}

// pathAttrs are the attributes of a command's paths.
func pathAttrs(info memory.CommandInfo) []attribute.KeyValue {
	var kvs []attribute.KeyValue
	if info.Path != "" {
		kvs = append(kvs, keyRecordID.String(info.Path))
	}
	if info.NewPath != "" {
		kvs = append(kvs, keyNewPath.String(info.NewPath))
	}
	return kvs
}

// CommandConflict counts a conflict, and a retry or a give-up.
func (o *observer) CommandConflict(ctx context.Context, retry bool) {
	cmd, _ := ctx.Value(commandKey{}).(*command)
	if cmd == nil {
		return
	}
	set := o.cmdCount[cmd.index]
	o.conflicts.Add(ctx, 1, set...)
	if retry {
		cmd.retries++
		o.retries.Add(ctx, 1, set...)
		cmd.span.AddEvent("conflict, retrying")
	} else {
		o.gaveUp.Add(ctx, 1, set...)
		cmd.span.AddEvent("conflict, giving up")
	}
}

// CommandEnd ends the command's span and records its duration.
func (o *observer) CommandEnd(ctx context.Context, res memory.Result) {
	cmd, _ := ctx.Value(commandKey{}).(*command)
	if cmd == nil {
		return
	}
	outcome, desc := commandOutcome(res)
	o.cmdDuration.Record(ctx, time.Since(cmd.start).Seconds(), o.cmdRecord[cmd.index][cmd.overwrite][outcome]...)
	if cmd.span.IsRecording() {
		cmd.span.SetAttributes(o.cmdEnd[outcome]...)
		cmd.span.SetAttributes(keyRetries.Int64(cmd.retries))
		if outcome > 0 {
			cmd.span.SetStatus(codes.Error, desc)
		}
	}
	cmd.span.End()
}
