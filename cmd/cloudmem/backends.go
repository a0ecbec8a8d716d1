package main

// The store schemes the binary opens. The local ones, encryption and
// history are always linked in; each cloud backend is in a file of its own
// (backend_NAME.go) that a build tag leaves out, for a smaller binary that
// builds faster (docs/build.md):
//
//	go build -tags no_gcs,no_azure ./cmd/cloudmem   # file, mem, s3, redis
//
// The tags are no_s3, no_gcs, no_azure and no_redis. A URL of a scheme
// left out is refused as storeurl refuses any unknown scheme.

import (
	_ "github.com/cloudmem/cloudmem/backends/file" // file:///dir and plain paths
	_ "github.com/cloudmem/cloudmem/backends/mem"  // mem://
	_ "github.com/cloudmem/cloudmem/crypt"         // encrypt=age
	_ "github.com/cloudmem/cloudmem/history"       // history=on
)
