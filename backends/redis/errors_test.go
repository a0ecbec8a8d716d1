package redis

import (
	"context"
	"errors"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cloudmem/cloudmem/blob"
)

// serverError stands for an error from go-redis that repeats what it was
// sent, password included.
type serverError string

func (e serverError) Error() string { return string(e) }
func (e serverError) RedisError()   {}

var _ goredis.Error = serverError("")

func TestWrapErr(t *testing.T) {
	s := &store{secret: "hunter2"}
	live := context.Background()
	cancelled, cancel := context.WithCancel(live)
	cancel()
	cause := serverError("ERR AUTH hunter2 rejected")
	for _, tc := range []struct {
		name, op, key string
		ctx           context.Context
		sentinel, err error
		want          string
		is            []error
		asServerError bool
	}{
		{name: "sentinel", op: "get", key: "a/b", ctx: live, sentinel: blob.ErrNotExist,
			want: `redis: get "a/b": blob: object does not exist`, is: []error{blob.ErrNotExist}},
		{name: "sentinel after cancel", op: "put", key: "k", ctx: cancelled, sentinel: blob.ErrPrecondition,
			want: `redis: put "k": blob: precondition failed`, is: []error{blob.ErrPrecondition}},
		{name: "client error, password hidden", op: "open", key: "p", ctx: live, err: cause,
			want: `redis: open "p": ERR AUTH xxxxx rejected`, asServerError: true},
		{name: "client error after cancel", op: "list", key: "", ctx: cancelled, err: cause,
			want: `redis: list "": context canceled (ERR AUTH xxxxx rejected)`, is: []error{context.Canceled}, asServerError: true},
		{name: "cancellation itself", op: "stat", key: "k", ctx: cancelled, err: context.Canceled,
			want: `redis: stat "k": context canceled`, is: []error{context.Canceled}},
	} {
		err := s.wrapErr(tc.ctx, tc.op, tc.key, tc.sentinel, tc.err)
		if err.Error() != tc.want {
			t.Errorf("%s: error %q, want %q", tc.name, err, tc.want)
		}
		for _, target := range tc.is {
			if !errors.Is(err, target) {
				t.Errorf("%s: errors.Is(err, %v) = false", tc.name, target)
			}
		}
		var se goredis.Error
		if got := errors.As(err, &se); got != tc.asServerError {
			t.Errorf("%s: errors.As(err, *goredis.Error) = %v, want %v", tc.name, got, tc.asServerError)
		}
	}
}
