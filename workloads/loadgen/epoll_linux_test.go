//go:build linux

package loadgen

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestPickAddr: of a name's addresses the loops use the first that accepts
// a connection, as wrk does, and the goroutines engine's dialer reaches
// the same server by trying them in turn.
func TestPickAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	// Nothing may listen on 127.0.0.1 at the same port.
	if l4, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err != nil {
		t.Skipf("127.0.0.1:%d is taken: %v", port, err)
	} else {
		l4.Close()
	}
	v4, v6 := net.ParseIP("127.0.0.1"), net.ParseIP("::1")
	ctx := context.Background()
	for _, c := range []struct {
		ips  []net.IP
		want net.IP
	}{
		{[]net.IP{v4, v6}, v6}, // the first refuses: the second
		{[]net.IP{v6, v4}, v6},
	} {
		if got := pickAddr(ctx, c.ips, port, time.Second); !got.Equal(c.want) {
			t.Errorf("pickAddr(%v) = %v, want %v", c.ips, got, c.want)
		}
	}

	// None accepts: the first, whose connect errors the run reports.
	ln.Close()
	if got := pickAddr(ctx, []net.IP{v6}, port, time.Second); !got.Equal(v6) {
		t.Errorf("one address: %v", got)
	}
	if got := pickAddr(ctx, []net.IP{v4, v6}, port, time.Second); !got.Equal(v4) {
		t.Errorf("none accepts: %v, want the first", got)
	}
}
