// Package integration runs the blob conformance suite and the memory
// handler's SPEC and concurrency suites over every cloud backend, each
// against a real server: MinIO (S3), fake-gcs-server (GCS), Azurite (Azure
// Blob) and Redis, started natively by emulators.sh.
//
// Start the servers and run everything with the README's test command,
// integration/run-tests.sh. To run these tests by hand:
//
//	bash integration/emulators.sh up
//	eval "$(bash integration/emulators.sh env)"
//	go test ./integration/
//
// A test whose server is missing fails when CI or CLOUDMEM_INTEGRATION is
// set. Otherwise TestMain skips the tests of each missing server as a
// whole, printing once why and how to start it; the tests that need no
// server (the harness checks, the timeouts against dead endpoints) run.
package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/blob"
	"github.com/cloudmem/cloudmem/storeurl"
)

// strict reports whether a missing server is a failure rather than a skip.
func strict() bool {
	return os.Getenv("CI") != "" || os.Getenv("CLOUDMEM_INTEGRATION") != ""
}

// server returns the value of the environment variable that points the
// tests at a server, after checking that something listens at addr (a
// host:port, or a URL whose host is used). A missing variable or a server
// that does not answer fails the test under CI and skips it otherwise.
func server(t *testing.T, name, envVar string) string {
	t.Helper()
	val := os.Getenv(envVar)
	if val == "" {
		missing(t, name, fmt.Sprintf("%s is not set", envVar))
	}
	addr := val
	if u, err := url.Parse(val); err == nil && u.Host != "" {
		addr = u.Host
	}
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		missing(t, name, fmt.Sprintf("%s=%s does not answer: %v", envVar, val, err))
	}
	conn.Close()
	return val
}

func missing(t *testing.T, name, why string) {
	t.Helper()
	msg := fmt.Sprintf("%s is not reachable (%s). Start the servers with:\n"+
		"\tbash integration/emulators.sh up && eval \"$(bash integration/emulators.sh env)\"", name, why)
	if strict() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

var uniq atomic.Int64

// uniquePrefix returns a store prefix no other test in this run (or in an
// earlier run against the same long-lived server) has used, so that every
// store a suite asks for starts empty.
func uniquePrefix() string {
	return fmt.Sprintf("t%d-%d-%d", time.Now().UnixNano(), os.Getpid(), uniq.Add(1))
}

// testBucket returns CLOUDMEM_TEST_BUCKET, the bucket (on Azure, the
// container) that the tests share on the server name; unset, it fails the
// test under CI and skips it otherwise.
func testBucket(t *testing.T, name string) string {
	t.Helper()
	bucket := os.Getenv("CLOUDMEM_TEST_BUCKET")
	if bucket == "" {
		missing(t, name, "CLOUDMEM_TEST_BUCKET is not set")
	}
	return bucket
}

// cleanUpTree deletes the tree dir of root when the test ends: what the
// test left under its prefix of a shared bucket. A tree that is gone, or
// never was, is fine. It deletes until the tree is gone, for MinIO hides
// a/b/c from listings while a/b exists.
func cleanUpTree(t *testing.T, root blob.Store, dir string) {
	t.Cleanup(func() {
		for range 10 {
			// t.Context() is done by now.
			err := blob.DeleteTree(context.Background(), root, dir)
			if errors.Is(err, blob.ErrNotExist) {
				return
			}
			if err != nil {
				t.Errorf("cleanup: %v", err)
				return
			}
		}
		t.Errorf("cleanup: %s is not empty after 10 rounds", dir)
	})
}

// openURL opens the store rawURL names, as the CLI does, and closes it when
// the test ends.
func openURL(t *testing.T, rawURL string) blob.Store {
	t.Helper()
	s, err := storeurl.Open(t.Context(), rawURL)
	if err != nil {
		t.Fatalf("storeurl.Open(%s): %v", rawURL, err)
	}
	t.Cleanup(func() { blob.Close(s) })
	return s
}
