//go:build linux

package loadgen

import (
	"context"
	"net"
	"strconv"
	"syscall"
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

// TestRawIO: the raw read and write of Dedicated mode return what
// syscall.Read and syscall.Write return: the bytes, EAGAIN on an empty
// non-blocking socket, 0 at EOF.
func TestRawIO(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	if n, err := rawIO(syscall.SYS_WRITE, fds[1], []byte("abc")); n != 3 || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
	buf := make([]byte, 8)
	if n, err := rawIO(syscall.SYS_READ, fds[0], buf); n != 3 || err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("read: %d %q, %v", n, buf[:n], err)
	}
	if n, err := rawIO(syscall.SYS_READ, fds[0], buf); n != 0 || err != syscall.EAGAIN {
		t.Errorf("read of an empty socket: %d, %v, want EAGAIN", n, err)
	}
	syscall.Close(fds[1])
	if n, err := rawIO(syscall.SYS_READ, fds[0], buf); n != 0 || err != nil {
		t.Errorf("read at EOF: %d, %v", n, err)
	}
	if n, err := rawIO(syscall.SYS_READ, -1, buf); err != syscall.EBADF {
		t.Errorf("read of a bad fd: %d, %v", n, err)
	}
}
