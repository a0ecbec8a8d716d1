package transfer

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cloudmem/cloudmem/blob"
)

var (
	// ErrProblems is the error a *ProblemsError wraps: some files could
	// not be moved, or Verify found differences; the others were handled.
	ErrProblems = errors.New("transfer: some files were not transferred")
	// ErrEmptySource means Copy's source holds no memory file: nothing was
	// copied, and a source URL that names the wrong place is the likely
	// cause.
	ErrEmptySource = errors.New("transfer: the source store holds no memory file")
)

// Kinds of Problem.
var (
	// ErrDiffers: the destination already holds the file with other
	// content; CopyOptions.Overwrite or ImportOptions.Overwrite replaces
	// it.
	ErrDiffers = errors.New("transfer: the destination holds other content")
	// ErrConflict: the destination kept refusing the conditional write
	// (another writer, or a store that cannot hold both a file and a
	// directory of one name).
	ErrConflict = errors.New("transfer: the conditional write kept failing")
	// ErrMismatch: Verify found the file missing from the destination,
	// deleted while verifying, or with other bytes.
	ErrMismatch = errors.New("transfer: the copy differs")
	// ErrInvalidInput: an import's entry is not a regular file with a valid
	// memory name, or clashes with another entry of the input.
	ErrInvalidInput = errors.New("transfer: invalid input entry")
	// ErrClash: an import's file would be a file where the store has a
	// directory, or beneath a file of the store, or the reverse.
	ErrClash = errors.New("transfer: clashes with the store")
	// ErrTooLarge: the object is over the read limit (memory.ReadLimit of
	// the store it is in): it is not read, and not moved.
	ErrTooLarge = errors.New("transfer: over the read limit")
	// ErrRefused: the destination's memory rules refused the file: it is
	// over the destination's file size limit, the destination holds as
	// many files as its limit allows, or its write policy rejects a secret
	// in it. The Reason is the memory tool's own text (docs/spec.md).
	ErrRefused = errors.New("transfer: refused by the destination's rules")
)

// Side names one of the two stores of Copy or Verify.
type Side int

// The two sides.
const (
	Source Side = iota + 1
	Destination
)

// String is "source" or "destination".
func (s Side) String() string {
	if s == Source {
		return "source"
	}
	return "destination"
}

// StoreError is a failure of one of the two stores of Copy or Verify
// (listing, reading or writing it) that stopped the whole operation. Its
// text is "source: " or "destination: " and Err's; Err is the store's or
// the memory handler's error, reachable with errors.Is and errors.As.
type StoreError struct {
	Side Side
	Err  error
}

func (e *StoreError) Error() string { return e.Side.String() + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// storeError returns err as a failure of side, or err itself when it is
// already a *StoreError.
func storeError(side Side, err error) error {
	if _, ok := errors.AsType[*StoreError](err); ok {
		return err
	}
	return &StoreError{Side: side, Err: err}
}

// tooLarge is the Problem of an object over its store's read limit; err
// is the store's *blob.TooLargeError when a Get found it, else nil and
// size says.
func tooLarge(key, where string, size, limit int64, err error) Problem {
	if tl, ok := errors.AsType[*blob.TooLargeError](err); ok {
		size, limit = tl.Size, tl.Limit
	}
	reason := fmt.Sprintf("%sis over the limit of %d bytes that a memory command reads; not moved", where, limit)
	if size >= 0 {
		reason = fmt.Sprintf("%sis %d bytes, over the limit of %d bytes that a memory command reads; not moved", where, size, limit)
	}
	return Problem{Key: key, Reason: reason, Kind: ErrTooLarge}
}

// Problem is one file that could not be moved, or that Verify found
// different.
type Problem struct {
	Key    string // the file's key (notes/a.md), or its name as the input spells it
	Reason string // what is wrong, in a few words
	Kind   error  // ErrDiffers, ErrConflict, ErrMismatch, ErrInvalidInput, ErrClash, ErrTooLarge or ErrRefused
}

// String returns "KEY: REASON".
func (p Problem) String() string { return p.Key + ": " + p.Reason }

// ProblemsError is the error of a run that found problems with some files.
// errors.Is(err, ErrProblems) is true for it.
type ProblemsError struct {
	Problems []Problem // sorted by Key, then Reason
}

// Error names the first problem and counts the others.
func (e *ProblemsError) Error() string {
	switch len(e.Problems) {
	case 0:
		return ErrProblems.Error()
	case 1:
		return "transfer: " + e.Problems[0].String()
	}
	return fmt.Sprintf("transfer: %s (and %d more problems)", e.Problems[0], len(e.Problems)-1)
}

// Unwrap returns ErrProblems.
func (e *ProblemsError) Unwrap() error { return ErrProblems }

// sortProblems sorts ps by key, then reason.
func sortProblems(ps []Problem) {
	slices.SortFunc(ps, func(a, b Problem) int {
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Reason, b.Reason)
	})
}
