package telemetry

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/memory"
)

// Metric names. See the package documentation for their attributes.
const (
	MetricCommandDuration = "cloudmem.memory.command.duration"
	MetricStorageDuration = "cloudmem.storage.duration"
	MetricConflicts       = "cloudmem.memory.conflicts"
	MetricRetries         = "cloudmem.memory.retries"
	MetricGaveUp          = "cloudmem.memory.gave_up"
	MetricStorageErrors   = "cloudmem.storage.errors"
	MetricBytesRead       = "cloudmem.storage.bytes_read"
	MetricBytesWritten    = "cloudmem.storage.bytes_written"
)

// Attribute keys. The gen_ai.* and error.type keys are the OpenTelemetry
// semantic conventions' (GenAI memory spans); the cloudmem.* keys are this
// package's own, for what the conventions do not cover.
const (
	keyOperation  = attribute.Key("gen_ai.operation.name")
	keyStoreID    = attribute.Key("gen_ai.memory.store.id")
	keyRecordID   = attribute.Key("gen_ai.memory.record.id")
	keyErrorType  = attribute.Key("error.type")
	keyCommand    = attribute.Key("cloudmem.memory.command")
	keyResult     = attribute.Key("cloudmem.memory.result")
	keyRetries    = attribute.Key("cloudmem.memory.retries")
	keyNewPath    = attribute.Key("cloudmem.memory.new_path")
	keyBackend    = attribute.Key("cloudmem.storage.backend")
	keyStorageOp  = attribute.Key("cloudmem.storage.operation")
	keyCondition  = attribute.Key("cloudmem.storage.condition")
	keyBytes      = attribute.Key("cloudmem.storage.bytes")
	keyObjects    = attribute.Key("cloudmem.storage.objects")
	keyStorageRes = attribute.Key("cloudmem.storage.result")
)

// otherErrorType is error.type for an error of no known kind, as the
// OpenTelemetry conventions spell it.
const otherErrorType = "_OTHER"

// Every attribute value below comes from a fixed table, so that the
// instrumentation can build its attribute sets once (New) and record
// without allocating them per call.

// Commands (cloudmem.memory.command), by index.
var commands = [...]string{"view", "create", "str_replace", "insert", "delete", "rename", "invalid"}

// commandIndex bounds the cardinality of the command attribute: the model
// may send any string as a command.
func commandIndex(name string) int {
	for i, c := range commands[:len(commands)-1] {
		if c == name {
			return i
		}
	}
	return len(commands) - 1
}

// operationName maps a memory command to the GenAI memory operation that
// describes it (gen_ai.operation.name): view reads or lists memories
// (search_memory), create makes a new file (create_memory, or upsert_memory
// when the handler may overwrite), str_replace, insert and rename modify an
// existing one (update_memory), delete removes one (delete_memory). Input
// that did not decode is "memory".
func operationName(command string, overwrite bool) string {
	switch command {
	case "view":
		return "search_memory"
	case "create":
		if overwrite {
			return "upsert_memory"
		}
		return "create_memory"
	case "str_replace", "insert", "rename":
		return "update_memory"
	case "delete":
		return "delete_memory"
	}
	return "memory"
}

// Memory error kinds (error.type of a command), by index; the last is
// otherErrorType, for a Result.Err of no known kind.
var errorKinds = [...]struct {
	kind error
	name string
}{
	{memory.ErrInvalidInput, "invalid_input"},
	{memory.ErrInvalidPath, "invalid_path"},
	{memory.ErrNotFound, "not_found"},
	{memory.ErrExists, "exists"},
	{memory.ErrNotFile, "not_a_file"},
	{memory.ErrNotDir, "not_a_directory"},
	{memory.ErrNotText, "not_text"},
	{memory.ErrOutOfRange, "out_of_range"},
	{memory.ErrTooLarge, "too_large"},
	{memory.ErrFull, "full"},
	{memory.ErrNoMatch, "no_match"},
	{memory.ErrAmbiguous, "ambiguous"},
	{memory.ErrRoot, "root"},
	{memory.ErrIntoItself, "into_itself"},
	{memory.ErrConflict, "conflict"},
	{memory.ErrReadOnly, "read_only"},
	{memory.ErrStorage, "storage"},
	{nil, otherErrorType},
}

// outcomes of a command: ok, then one per error kind.
const outcomes = 1 + len(errorKinds)

// commandOutcome returns the outcome index of res (0: success; otherwise
// 1 + its error kind) and, for a failure, the span status description: for
// a storage failure the short cause the model reads ("The memory storage
// failed: the request timed out"), which names no path, key, host or
// credential; for any other failure the kind alone, because the model's
// error texts quote paths and file content.
func commandOutcome(res memory.Result) (outcome int, desc string) {
	if !res.IsError {
		return 0, ""
	}
	var e *memory.Error
	if errors.As(res.Err, &e) {
		for i, k := range errorKinds[:len(errorKinds)-1] {
			if e.Kind == k.kind {
				if k.kind == memory.ErrStorage {
					return 1 + i, e.Msg
				}
				return 1 + i, k.name
			}
		}
	}
	return len(errorKinds), otherErrorType
}

// Storage operations (cloudmem.storage.operation), by index.
const (
	opGet = iota
	opStat
	opPut
	opDelete
	opList
	opRename
	opDeleteTree
	opDeleteBatch
	opCopy
	numOps
)

var opNames = [numOps]string{"get", "stat", "put", "delete", "list", "rename", "delete_tree", "delete_batch", "copy"}

// Conditions (cloudmem.storage.condition), by index; condAbsent means the
// call takes none, and the attribute is left out.
const (
	condAbsent = iota
	condNone
	condIfAbsent
	condIfVersion
	numConds
)

var condNames = [numConds]string{"", "none", "if_absent", "if_version"}

// condition returns the index of c.
func condition(c blob.Cond) int {
	switch {
	case c.IfAbsent:
		return condIfAbsent
	case c.IfVersion != "":
		return condIfVersion
	}
	return condNone
}

// Storage results (cloudmem.storage.result), by index.
const (
	resOK = iota
	resNotFound
	resPrecondition
	resTooLarge
	resError
	numResults
)

var resultNames = [numResults]string{"ok", "not_found", "precondition_failed", "too_large", "error"}

// Storage failures (error.type of a storage call), by index, with the
// short cause used when the error is no memory.Causer.
var storageErrors = [...]struct {
	name, cause string
}{
	{"canceled", "the request was cancelled"},
	{"timeout", "the request timed out"},
	{"read_only", "the store is read-only"},
	{"invalid_key", "the store rejected the path"},
	{"unsupported", "the store does not support the call"},
	{otherErrorType, "the storage backend returned an error"},
}

// storageResult classifies the outcome of a storage call. A missing key, a
// failed condition and an object over the read limit are answers, not
// failures: failure is -1 for them. Otherwise failure indexes
// storageErrors, and cause is a short text safe to export: the error's own
// memory.Causer text when it has one (the encryption layer's "an object
// could not be decrypted"), or the kind's fixed text. err.Error() is never
// used: it may hold keys, hosts and credentials.
func storageResult(err error) (result, failure int, cause string) {
	switch {
	case err == nil:
		return resOK, -1, ""
	case errors.Is(err, blob.ErrNotExist):
		return resNotFound, -1, ""
	case errors.Is(err, blob.ErrPrecondition):
		return resPrecondition, -1, ""
	case errors.Is(err, blob.ErrTooLarge):
		return resTooLarge, -1, ""
	case errors.Is(err, context.Canceled):
		failure = 0
	case errors.Is(err, context.DeadlineExceeded):
		failure = 1
	case errors.Is(err, blob.ErrReadOnly):
		failure = 2
	case errors.Is(err, blob.ErrInvalidKey):
		failure = 3
	case errors.Is(err, errors.ErrUnsupported):
		failure = 4
	default:
		failure = 5
	}
	cause = storageErrors[failure].cause
	var c memory.Causer
	if errors.As(err, &c) {
		if s := c.ModelCause(); s != "" {
			cause = s
		}
	}
	return resError, failure, cause
}
