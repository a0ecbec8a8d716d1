// Package mem is an in-memory blob.Store, for tests, examples and
// short-lived agents. Nothing survives the process.
//
// # URL
//
//	mem://            a new, empty store each time it is opened
//
// This package registers mem:// with package storeurl when it is linked,
// like every backend. It accepts the shared timeout= parameter, which wraps
// the store with blob.WithTimeout.
//
// # Guarantees
//
// Every method, Rename and DeleteTree included, is atomic under one lock:
// conditional writes are exact and a renamed tree is never seen half moved.
// Data passed to Put and returned by Get is copied, so callers may reuse
// their slices.
//
// Keys are kept in byte order in a B-tree (github.com/google/btree) beside
// the objects, so List, Rename and DeleteTree cost time logarithmic in the
// store's size plus the keys under their prefix, not a scan of every key.
package mem
