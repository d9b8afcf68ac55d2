package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestNextBackoff(t *testing.T) {
	var got []time.Duration
	b := time.Duration(0)
	for range 10 {
		b = nextBackoff(b)
		got = append(got, b)
	}
	want := "[1ms 2ms 4ms 8ms 16ms 32ms 64ms 100ms 100ms 100ms]"
	if fmt.Sprint(got) != want {
		t.Errorf("backoff %v, want %s", got, want)
	}
}

// brokenServer accepts every connection on 127.0.0.1, reads the request
// and then, as mode says, resets the connection ("reset": SO_LINGER 0, so
// the close sends RST) or answers half a response and closes it ("cut":
// the client sees EOF in the body, and the server's side, which closed
// first, is left in TIME_WAIT). It returns its port and its accept count.
func brokenServer(t *testing.T, mode string) (int, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
					return
				}
				if mode == "reset" {
					c.(*net.TCPConn).SetLinger(0)
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"message\":")
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, &accepted
}

// timeWait counts the IPv4 sockets in TIME_WAIT (state 06 in
// /proc/net/tcp) with port at either end.
func timeWait(t *testing.T, port int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Skipf("cannot count TIME_WAIT sockets: %v", err)
	}
	hex := fmt.Sprintf(":%04X", port)
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 3 && f[3] == "06" && (strings.HasSuffix(f[1], hex) || strings.HasSuffix(f[2], hex)) {
			n++
		}
	}
	return n
}

// longTests says whether the exhaustive variants run (the broken-server
// backoff test for a whole second, as the README's numbers were
// measured): PROFDIFF_TEST_LONG=1 turns them on.
func longTests() bool { return os.Getenv("PROFDIFF_TEST_LONG") != "" }

// maxTries is the most connects one connection can make in window when
// every try fails and each failure is followed by nextBackoff's wait: the
// first connect, then one after each wait that fits (16 in a second: 1ms,
// 2ms, ..., 64ms, then every 100ms).
func maxTries(window time.Duration) int64 {
	tries, wait, waited := int64(1), time.Duration(0), time.Duration(0)
	for {
		wait = nextBackoff(wait)
		if waited+wait > window {
			return tries
		}
		waited += wait
		tries++
	}
}

// TestMaxTries checks the bound the backoff tests use against the
// schedule counted by hand.
func TestMaxTries(t *testing.T) {
	for w, want := range map[time.Duration]int64{0: 1, time.Millisecond: 2, 300 * time.Millisecond: 9, 500 * time.Millisecond: 11, time.Second: 16} {
		if got := maxTries(w); got != want {
			t.Errorf("maxTries(%v) = %d, want %d", w, got, want)
		}
	}
}

// TestBackoffAgainstBrokenServer drives, for 300ms (a second with
// PROFDIFF_TEST_LONG), a server that breaks every connection: each
// connection backs off after each failure, so there are a few reconnects
// per connection-second rather than thousands, each counted in the
// report, and few sockets are left in TIME_WAIT. 300ms takes each
// connection through the whole doubling to the 100ms cap.
func TestBackoffAgainstBrokenServer(t *testing.T) {
	window := 300 * time.Millisecond
	if longTests() {
		window = time.Second
	}
	for _, mode := range []string{"reset", "cut"} {
		t.Run(mode, func(t *testing.T) {
			forEngines(t, func(t *testing.T, e testEngine) {
				port, accepted := brokenServer(t, mode)
				tw0 := timeWait(t, port)
				const conns = 8
				cfg := e.config(Config{URL: "http://127.0.0.1:" + strconv.Itoa(port) + "/", Connections: conns, Duration: window})
				rep, err := Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				checkCounts(t, rep)
				// Without the backoff a connection reconnects hundreds of
				// times in 300ms; with it, at most maxTries(window); allow
				// twice that. A busy machine only delays the reconnects.
				limit := conns * 2 * maxTries(window)
				if rep.OK != 0 || rep.SocketErrors == 0 || rep.Reconnects < conns || rep.Reconnects > limit {
					t.Errorf("ok %d, socket errors %d, reconnects %d: want failures and between %d and %d reconnects",
						rep.OK, rep.SocketErrors, rep.Reconnects, conns, limit)
				}
				if acc := accepted.Load(); acc > int64(conns)+rep.Reconnects {
					t.Errorf("server accepted %d connections, more than %d connections and %d reconnects", acc, conns, rep.Reconnects)
				}
				tw := timeWait(t, port) - tw0
				if tw > 300 {
					t.Errorf("%d sockets in TIME_WAIT toward port %d after %v", tw, port, window)
				}
				if mode == "cut" && tw == 0 {
					t.Errorf("no socket in TIME_WAIT toward port %d: the count does not see them", port)
				}
				if !strings.Contains(reportText(rep), fmt.Sprintf("  reconnects     %d (after failures, each after a backoff of 1ms doubling to 100ms", rep.Reconnects)) {
					t.Errorf("report lacks the reconnects:\n%s", reportText(rep))
				}
				t.Logf("%d reconnects, %d accepted, %d in TIME_WAIT, errors %v", rep.Reconnects, accepted.Load(), tw, rep.SocketErrorKinds)
			})
		})
	}
}

func reportText(r *Report) string {
	var b strings.Builder
	r.WriteText(&b)
	return b.String()
}
