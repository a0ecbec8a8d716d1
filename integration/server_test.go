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
// set, and otherwise skips with a message saying how to start it.
package integration

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"
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
