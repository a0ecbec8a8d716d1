//go:build !no_redis

package main

import _ "github.com/cloudmem/cloudmem/backends/redis" // redis://, rediss://, redis-cluster://, rediss-cluster://
