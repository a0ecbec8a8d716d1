package crypt

import (
	"errors"
	"fmt"
)

// Sentinel errors for objects that cannot be read back. Test for them with
// errors.Is; every one reaches the caller inside an *Error.
var (
	// ErrWrongKey means none of the configured identities opens the
	// object's age header: it was encrypted to other recipients, or the
	// recipient stanza meant for our identity was altered (age cannot tell
	// these two apart).
	ErrWrongKey = errors.New("crypt: no configured identity can decrypt the object")
	// ErrCorrupt means the object, or the store's integrity key object,
	// failed a check after decryption began: it was truncated or altered,
	// forged by someone holding only the public recipients (its MAC does
	// not verify), copied from another key (its frame names another key),
	// or the integrity key object is missing.
	ErrCorrupt = errors.New("crypt: object failed its integrity check")
	// ErrUntrustedKey means the store's integrity key object decrypts
	// and is intact but cannot be trusted: it does not have the pinned
	// fingerprint (Config.KeyFingerprint), or, with none pinned, none of
	// the configured identities vouched for it. Someone with write access
	// replaced or planted it, or it was made by another identity (an
	// earlier version of this package, another application key, the key
	// of before a Rekey). The error's Reason names the fingerprint found.
	ErrUntrustedKey = errors.New("crypt: the store's integrity key object is not trusted")
	// ErrNotEncrypted means the object does not start with this package's
	// format line, so it was not written through a crypt store: plain data
	// stored before encryption was enabled, or written around the wrapper.
	ErrNotEncrypted = errors.New("crypt: object is not encrypted")
)

// Error reports an object that could not be decrypted or verified. Its
// message names the key and a short reason; it never contains key material,
// plaintext or the underlying age message (which may quote object bytes).
type Error struct {
	// Key is the object's key in the wrapped store.
	Key string
	// Err is ErrWrongKey, ErrCorrupt, ErrUntrustedKey or ErrNotEncrypted.
	Err error
	// Reason says which check failed, for logs, e.g. "the frame belongs to
	// another key".
	Reason string

	cause error // the age error, when there is one; reachable with errors.As
}

func (e *Error) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("%v: %q", e.Err, e.Key)
	}
	return fmt.Sprintf("%v: %q: %s", e.Err, e.Key, e.Reason)
}

// Unwrap returns Err and, when there is one, the underlying age error.
func (e *Error) Unwrap() []error {
	if e.cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.cause}
}

// ModelCause returns a short description that is safe to show to a model
// (the memory handler's "The memory storage failed: {cause}"): it names no
// key, path or key material.
func (e *Error) ModelCause() string {
	switch {
	case errors.Is(e.Err, ErrWrongKey):
		return "an object could not be decrypted with the configured identities"
	case errors.Is(e.Err, ErrNotEncrypted):
		return "an object is not encrypted"
	case errors.Is(e.Err, ErrUntrustedKey):
		return "the store's encryption key object is not trusted (replaced, or made with another identity)"
	case e.Key == keyObject:
		return "the store's encryption key object is missing or damaged"
	default:
		return "an object failed its integrity check"
	}
}

func wrongKey(key string, cause error) *Error {
	return &Error{Key: key, Err: ErrWrongKey, Reason: "no identity matches its recipients", cause: cause}
}

func corrupt(key, reason string, cause error) *Error {
	return &Error{Key: key, Err: ErrCorrupt, Reason: reason, cause: cause}
}

func untrusted(reason string) *Error {
	return &Error{Key: keyObject, Err: ErrUntrustedKey, Reason: reason}
}

func notEncrypted(key string) *Error {
	return &Error{Key: key, Err: ErrNotEncrypted, Reason: "it lacks the " + magic + " format line"}
}
