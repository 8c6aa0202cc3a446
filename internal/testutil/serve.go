package testutil

import (
	"net"
	"testing"
)

// ServeLoopback runs serve (a server's Serve) on a free loopback TCP port, calls stop when the
// test ends, and returns the address.
func ServeLoopback(tb testing.TB, serve func(net.Listener) error, stop func()) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go serve(l)
	tb.Cleanup(stop)
	return l.Addr().String()
}
