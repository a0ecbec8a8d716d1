package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// wrapErr turns the error of one operation into the error the store returns.
// It is the one place where failures are mapped:
//
//   - a done ctx wins: the result wraps ctx.Err() (and the client's error, if
//     any), so errors.Is(err, context.Canceled) holds after a cancellation;
//   - anything else, go-redis errors included, is wrapped as it is, so that
//     errors.As reaches the go-redis error.
//
// sentinel, when non-nil, is the blob sentinel the result must also wrap
// (blob.ErrNotExist, blob.ErrPrecondition). secret, when non-empty, is
// removed from the message: no error carries the password.
func (s *store) wrapErr(ctx context.Context, op, key string, sentinel, err error) error {
	if err == nil && sentinel == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && sentinel == nil {
		if err == nil || errors.Is(err, cerr) {
			return fmt.Errorf("redis: %s %q: %w", op, key, cerr)
		}
		err = fmt.Errorf("%w (%w)", cerr, err)
	}
	var out error
	switch {
	case sentinel != nil && err != nil:
		out = fmt.Errorf("redis: %s %q: %w: %w", op, key, sentinel, err)
	case sentinel != nil:
		out = fmt.Errorf("redis: %s %q: %w", op, key, sentinel)
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
