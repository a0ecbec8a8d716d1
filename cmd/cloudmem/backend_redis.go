//go:build !no_redis

package main

import (
	"context"

	goredis "github.com/redis/go-redis/v9"

	_ "github.com/cloudmem/cloudmem/backends/redis" // redis://, rediss://, redis-cluster://, rediss-cluster://
)

// go-redis prints its connection failures on stderr by itself, four lines
// before the command's own (issue 26 item 10); the command's error line
// names the cause once.
func init() { goredis.SetLogger(quietRedis{}) }

// quietRedis is a go-redis logger that prints nothing.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}
