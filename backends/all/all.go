// Package all registers every storage backend with package storeurl, so a
// program that imports it for its side effect
//
//	import _ "github.com/cloudmem/cloudmem/backends/all"
//
// can open a store of any scheme with storeurl.Open. Import a single backend
// package instead to link only that backend and its SDK.
//
// Each backend package adds its own import line below. mem:// needs none:
// package storeurl registers it itself (see storeurl/mem.go).
package all

import (
	_ "github.com/cloudmem/cloudmem/backends/azure" // azblob://
	_ "github.com/cloudmem/cloudmem/backends/file"  // file:///dir and plain paths
	_ "github.com/cloudmem/cloudmem/backends/gcs"   // gs://
	_ "github.com/cloudmem/cloudmem/backends/redis" // redis://, rediss://, redis-cluster://, rediss-cluster://
	_ "github.com/cloudmem/cloudmem/backends/s3"    // s3://
)
