package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// wrapErr turns the failure of one operation on key into the error the
// store returns. It is the one place where failures are mapped. Exactly one
// of sentinel and err is non-nil:
//
//   - sentinel is the blob sentinel a script reported (blob.ErrNotExist,
//     blob.ErrPrecondition, possibly wrapped with detail);
//   - err is the client's error, wrapped as it is so that errors.As reaches
//     the go-redis error; when ctx is done the result also wraps ctx.Err(),
//     so errors.Is(err, context.Canceled) holds after a cancellation.
//
// The store's password, if it knows it, is removed from the message.
func (s *store) wrapErr(ctx context.Context, op, key string, sentinel, err error) error {
	var out error
	switch cerr := ctx.Err(); {
	case sentinel != nil:
		out = fmt.Errorf("redis: %s %q: %w", op, key, sentinel)
	case cerr != nil && errors.Is(err, cerr):
		out = fmt.Errorf("redis: %s %q: %w", op, key, err)
	case cerr != nil:
		out = fmt.Errorf("redis: %s %q: %w (%w)", op, key, cerr, err)
	default:
		out = fmt.Errorf("redis: %s %q: %w", op, key, err)
	}
	if s.secret != "" && strings.Contains(out.Error(), s.secret) {
		out = &redacted{err: out, secret: s.secret}
	}
	return out
}

// redacted hides a secret in an error's message while keeping the error
// chain intact for errors.Is and errors.As.
type redacted struct {
	err    error
	secret string
}

func (r *redacted) Error() string { return strings.ReplaceAll(r.err.Error(), r.secret, "xxxxx") }
func (r *redacted) Unwrap() error { return r.err }
