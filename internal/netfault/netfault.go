// Package netfault provides network endpoints that fail the way unreachable
// and stuck servers do, for tests that prove a client gives up in time.
//
// # Endpoints
//
// ClosedPort returns a loopback address nothing listens on: a connection
// attempt is refused at once. Silent returns a listener that accepts every
// connection and then neither reads nor writes, like a server that hangs
// after the TCP handshake: a client with no deadline waits forever.
//
// Both are safe for concurrent use and clean up after the test.
package netfault

import (
	"net"
	"sync"
	"testing"
)

// ClosedPort returns a "127.0.0.1:PORT" address that was free a moment ago
// and on which nothing listens.
func ClosedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("netfault: %v", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatalf("netfault: %v", err)
	}
	return addr
}

// Silent starts a listener on 127.0.0.1 that accepts connections and never
// answers, and returns its "127.0.0.1:PORT" address. The connections stay
// open (unread) until the test ends, when the listener and every
// connection are closed.
func Silent(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("netfault: %v", err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return // closed at cleanup
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}
