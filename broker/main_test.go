package broker

import (
	"net"
	"testing"
)

// freeAddr returns a free 127.0.0.1 port: the broker listens on a fixed
// address, as embedded.kafka.listener gives it.
func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
