package netfault_test

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/cloudmem/cloudmem/internal/netfault"
)

func TestClosedPortRefuses(t *testing.T) {
	c, err := net.DialTimeout("tcp", netfault.ClosedPort(t), time.Second)
	if err == nil {
		c.Close()
		t.Fatal("a connection to the closed port succeeded")
	}
}

func TestSilentAcceptsAndNeverAnswers(t *testing.T) {
	c, err := net.DialTimeout("tcp", netfault.Silent(t), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read = %d, %v; want no byte before the deadline", n, err)
	}
}
