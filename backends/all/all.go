// Package all registers every storage backend, and the encryption and
// history layers, with package storeurl, so a program that imports it for its side effect
//
//	import _ "github.com/cloudmem/cloudmem/backends/all"
//
// can open a store of any scheme, encrypted or not, with or without history,
// with storeurl.Open. Import single backend packages instead to link only
// those backends and their SDKs, package crypt for encrypt=age and package
// history for history=on.
//
// Each backend package adds its own import line below.
package all

import (
	_ "github.com/cloudmem/cloudmem/backends/azure" // azblob://
	_ "github.com/cloudmem/cloudmem/backends/file"  // file:///dir and plain paths
	_ "github.com/cloudmem/cloudmem/backends/gcs"   // gs://
	_ "github.com/cloudmem/cloudmem/backends/mem"   // mem://
	_ "github.com/cloudmem/cloudmem/backends/redis" // redis://, rediss://, redis-cluster://, rediss-cluster://
	_ "github.com/cloudmem/cloudmem/backends/s3"    // s3://
	_ "github.com/cloudmem/cloudmem/crypt"          // encrypt=age
	_ "github.com/cloudmem/cloudmem/history"        // history=on
)
