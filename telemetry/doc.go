// Package telemetry records OpenTelemetry traces and metrics for the memory
// commands a memory.Handler runs and for the storage calls they make. It
// depends on the OpenTelemetry API only: with no SDK installed (the global
// providers' default) every span and instrument is a no-op. A program
// chooses the SDK and exporter, for example with package
// telemetry/otlpsetup.
//
// # Use
//
// Create one Instrumentation, wrap the store with its Store method (the
// storage spans) and give its Observer to the handler (the command spans):
//
//	in, err := telemetry.New(telemetry.Options{Backend: "s3"})
//	h, err := memory.New(in.Store(store), memory.Options{Observer: in.Observer()})
//
// Call the handler with the context of the caller's span (the agent's
// execute_tool span, as the Anthropic SDK's tool runner creates it): the
// command span becomes its child, and each storage span a child of the
// command span.
//
// # Spans
//
// A command span follows the GenAI memory client span of the OpenTelemetry
// semantic conventions (gen_ai.memory.client, development status): its name
// is gen_ai.operation.name, and its kind INTERNAL, as the conventions allow
// for a memory system in the caller's process (the storage spans are the
// CLIENT spans). The commands map to the conventions' operations:
//
//	view                      search_memory   (reads or lists memories)
//	create                    create_memory   (upsert_memory with memory.Options.Overwrite)
//	str_replace, insert       update_memory   (modify one existing record)
//	rename                    update_memory
//	delete                    delete_memory
//	input that did not decode "memory"        (no convention applies)
//
// Its attributes:
//
//	gen_ai.operation.name     as above (required by the conventions)
//	gen_ai.memory.store.id    Options.StoreID, when set: the conventions let each component say what it
//	                          maps to; here, a name the program gives its store, never a bucket or URL
//	gen_ai.memory.record.id   the memory path (/memories/notes.md; rename's old_path), only with
//	                          Options.RecordPaths: a path is the user's data
//	cloudmem.memory.new_path  rename's new_path, only with Options.RecordPaths
//	cloudmem.memory.command   view, create, str_replace, insert, delete, rename, or invalid: the
//	                          operation name alone does not tell str_replace from insert or rename
//	cloudmem.storage.backend  Options.Backend (s3, gcs, azure, redis, file, mem)
//	cloudmem.memory.result    ok, or error when the model got an error result
//	cloudmem.memory.retries   how many times the command was re-read and re-applied after a conflict
//	error.type                on failure, the memory error kind: invalid_input, invalid_path, not_found,
//	                          exists, not_a_file, not_a_directory, not_text, out_of_range, too_large,
//	                          full, no_match, ambiguous, root, into_itself, conflict, read_only, storage
//
// A failed command has status Error. Its description is the short cause for
// a storage failure ("The memory storage failed: the request timed out"),
// and otherwise the error kind alone, because the model's error texts quote
// paths and file content. Each conflict adds an event, "conflict, retrying"
// or "conflict, giving up".
//
// The conventions' other memory attributes are left out:
// gen_ai.memory.query.text and gen_ai.memory.records are content (file
// text), gen_ai.memory.record.count has no meaning for one file or a
// directory of unknown size, and gen_ai.provider.name is for external GenAI
// services.
//
// A storage span is named "storage " plus the operation, of kind CLIENT,
// with:
//
//	cloudmem.storage.backend    as above
//	cloudmem.storage.operation  get, stat, put, delete, list, rename, delete_tree, delete_batch, copy
//	cloudmem.storage.condition  put and delete: none, if_absent or if_version; copy, and
//	                            delete_batch with versions: if_version
//	cloudmem.storage.bytes      get: bytes read; put: bytes written (0 when refused)
//	cloudmem.storage.objects    list: objects listed; delete_batch: objects to delete
//	cloudmem.storage.result     ok, not_found, precondition_failed, too_large, error
//	                            (unsupported: a capability the inner store lacks; nothing was called)
//	error.type                  on failure: canceled, timeout, read_only, invalid_key, unsupported, _OTHER
//
// A missing key, a failed condition and an object over the read limit are
// answers the handler expects, not failures: they set the result, not
// error.type, and leave the status unset. A failure has status Error whose
// description is the short cause (the error's memory.Causer text, or a fixed
// text per kind). The OpenTelemetry conventions for databases and object
// stores differ per system (db.*, aws.s3.*) and would put bucket names and
// keys on spans; these attributes are uniform over every backend instead.
//
// # Metrics
//
//	cloudmem.memory.command.duration   histogram, s: per command; gen_ai.operation.name,
//	                                   cloudmem.memory.command, cloudmem.storage.backend,
//	                                   cloudmem.memory.result, error.type (on failure)
//	cloudmem.storage.duration          histogram, s: per storage call; backend, operation, result
//	cloudmem.memory.conflicts          counter: writes that lost a race; command, backend
//	cloudmem.memory.retries            counter: re-reads after a conflict; command, backend
//	cloudmem.memory.gave_up            counter: commands that gave up after their last retry
//	cloudmem.storage.errors            counter: failed storage calls; backend, operation, error.type
//	cloudmem.storage.bytes_read        counter, By: bytes returned by get; backend, operation
//	cloudmem.storage.bytes_written     counter, By: bytes stored by put; backend, operation
//	cloudmem.memory.secrets            counter: secrets a write policy found; backend,
//	                                   cloudmem.policy.rule, cloudmem.policy.mode (and an
//	                                   event cloudmem.memory.secret on the command span)
//
// The GenAI conventions define no memory metric, and
// gen_ai.client.operation.duration requires provider and model attributes
// that do not apply, hence the cloudmem.* names. conflicts = retries +
// gave_up. Every attribute value comes from a small fixed set, so the
// metrics' cardinality is bounded whatever the model sends.
//
// # Privacy
//
// No attribute, event or status holds file content, a storage key, a
// bucket, host or URL, or an error's text (which may name any of them, or a
// credential): failures are described by kind. Memory paths appear only
// with Options.RecordPaths, and then as the path the model used, never as
// the key in the bucket.
//
// # Cost
//
// A tracer provider that makes no spans (the default global one, or
// trace/noop) is detected, and then no span is started at all; with the
// global providers this is checked again whenever the program installs
// another, so installing the SDK after New works. When, besides, no
// instrument is enabled (metric.Float64Histogram.Enabled and the like), a
// command and its storage calls record nothing and do not read the clock:
// no allocation, a few atomic loads. Attribute sets are built once, in New.
// With the SDK, spans are batched and exported off the command's path. The
// docs/benchmarks-by-hand.md gives the measured numbers (BenchmarkCommand).
//
// The detection starts one probe span under a remote parent that is not
// sampled; with the SDK's default (parent-based) sampler it is never
// recorded or exported.
package telemetry
