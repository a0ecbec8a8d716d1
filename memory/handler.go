// Package memory executes the commands of Claude's memory tool
// (memory_20250818) against a blob.Store.
//
// The model sends view, create, str_replace, insert, delete and rename
// commands on paths under /memories; a Handler validates them, maps each path
// to a store key relative to /memories, simulates directories over the flat
// key space, and returns the exact result texts the model was trained on
// (see SPEC.md in the project's shared documents).
package memory

import (
	"context"
	"errors"
	"log/slog"

	"github.com/cloudmem/cloudmem/blob"
)

// Default limits; see Options.
const (
	DefaultMaxFileBytes  = 100_000
	DefaultMaxFiles      = 2_000
	DefaultViewLimit     = 16_000
	DefaultMaxImageBytes = 5 << 20
	DefaultMaxLines      = 999_999
	DefaultRetries       = 8
)

// Options configures a Handler. The zero value gives the defaults above.
type Options struct {
	// MaxFileBytes caps a memory file's size. 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxFiles caps the number of files in the store (hidden files count,
	// bookkeeping under .cloudmem/ does not). 0 means DefaultMaxFiles;
	// negative means no limit.
	MaxFiles int
	// ViewLimit caps a file view's numbered lines, in Unicode code points.
	// 0 means DefaultViewLimit; negative means no truncation.
	ViewLimit int
	// MaxImageBytes caps the size of an image returned by view.
	// 0 means DefaultMaxImageBytes.
	MaxImageBytes int64
	// MaxLines caps the number of lines view shows from one file.
	// 0 means DefaultMaxLines.
	MaxLines int
	// Retries is how many times a command that lost a race with another
	// writer is re-read and re-applied before it gives up. 0 means
	// DefaultRetries; negative means no retry.
	Retries int
	// Overwrite makes create replace an existing file instead of failing.
	Overwrite bool
	// ReadOnly refuses the writing commands. A store for which
	// blob.IsReadOnly is true is read-only whatever this says.
	ReadOnly bool
	// Logger receives the details of storage failures, which the model
	// sees only in short form. Nil means slog.Default().
	Logger *slog.Logger
}

// Image is the content of an image file returned by view.
type Image struct {
	MediaType string // image/png, image/jpeg, image/gif or image/webp
	Data      []byte // the raw file bytes (not base64)
}

// Result is the outcome of one command: the tool_result the model receives.
type Result struct {
	// Text is the result text. Every error text starts with "Error: ".
	// It is empty when Image is set.
	Text string
	// Image is set when view returned an image instead of text.
	Image *Image
	// IsError is the tool_result's is_error flag.
	IsError bool
}

// Handler executes memory commands against one store. It is safe for
// concurrent use: several Handlers (in one process or many) may share one
// store, and no update is lost (see Execute).
type Handler struct {
	store blob.Store
	opts  Options
	log   *slog.Logger
}

// New returns a Handler over store. It returns an error when store is nil or
// an option is out of range.
func New(store blob.Store, opts Options) (*Handler, error) {
	if store == nil {
		return nil, errors.New("memory: nil store")
	}
	// TODO(core): validate and default the options.
	return &Handler{store: store, opts: opts, log: opts.Logger}, nil
}

// Execute runs one command. input is the raw JSON "input" object of a
// tool_use block. It never panics; malformed input yields an error Result
// and touches no storage.
func (h *Handler) Execute(ctx context.Context, input []byte) Result {
	return Result{Text: "Error: not implemented", IsError: true}
}
