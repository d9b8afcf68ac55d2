package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server is an httptest server on 127.0.0.1 that counts the connections it
// accepts.
type server struct {
	*httptest.Server
	accepted atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewUnstartedServer(h)
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.accepted.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func helloJSON(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Server", "test")
	json.NewEncoder(w).Encode(map[string]string{"message": "Hello, World!"})
}

// short is a config for tests: a short warmup and window. The tests that
// use it assert on counts and their ratios, which a 100ms window fills
// with hundreds of requests or more even on a busy machine.
func short(url string, conns int, e testEngine) Config {
	return e.config(Config{URL: url, Connections: conns, Warmup: 20 * time.Millisecond, Duration: 100 * time.Millisecond})
}

// everyFourth checks that n503 is the count of every 4th request a server
// numbered among sent requests of a window driven by conns connections.
// The server numbers requests as it handles them, so those of the window
// are a consecutive run of numbers but for the ones in flight when it
// opened or closed, at most conns at either end: the count of multiples
// of 4 is within 1 + 1.5×conns of sent/4 (checked as 2×conns+1), however
// few requests a busy machine let through.
func everyFourth(t *testing.T, n503, sent int64, conns int) {
	t.Helper()
	if d := 4*n503 - sent; n503 == 0 || d < -4*int64(2*conns+1) || d > 4*int64(2*conns+1) {
		t.Errorf("%d 503s of %d requests (share %.3f), want about 1/4 (within %d)", n503, sent, float64(n503)/float64(sent), 2*conns+1)
	}
}

// testEngine is an engine as a test runs it.
type testEngine struct {
	name      string // Config.Engine
	dedicated bool   // Config.Dedicated
}

func (e testEngine) config(c Config) Config {
	c.Engine, c.Dedicated = e.name, e.dedicated
	return c
}

// maxTestConns is the most connections a test that runs forEngines opens.
const maxTestConns = 8

// forEngines runs f for every engine available: goroutines, epoll, and
// epoll in Dedicated mode as profdiff load runs it. Dedicated loops keep
// their Ps while they wait, one loop per P up to one per connection, so
// that subtest raises GOMAXPROCS above the connection count: the
// in-process test server keeps Ps of its own. (TestDedicated runs
// Dedicated loops on every P against a server in a child process.)
func forEngines(t *testing.T, f func(t *testing.T, e testEngine)) {
	engines := []testEngine{{name: EngineGoroutines}}
	if epollSupported {
		engines = append(engines, testEngine{name: EngineEpoll}, testEngine{name: EngineEpoll, dedicated: true})
	}
	for _, e := range engines {
		name := e.name
		if e.dedicated {
			name += "-dedicated"
		}
		t.Run(name, func(t *testing.T) {
			if e.dedicated {
				prev := runtime.GOMAXPROCS(maxTestConns + 2)
				defer runtime.GOMAXPROCS(prev)
			}
			f(t, e)
		})
	}
}

const childEnv = "LOADGEN_TEST_SERVER"

// TestMain lets the test binary serve as a server in a child process.
func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		serveChild(mode)
		return
	}
	os.Exit(m.Run())
}

// The child server's modes (see serveChild).
const (
	childOK      = "ok"    // answer JSON
	childEvery4  = "503/4" // 503 to every 4th request, JSON to the others
	childHang    = "hang"  // never answer; hold each request until the client goes
	childCutHalf = "cut/2" // every 2nd request: half a response, then close; the others: close
)

// serveChild serves on 127.0.0.1 as mode says, prints the address and
// serves until stdin closes.
func serveChild(mode string) {
	var count atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(ln.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := count.Add(1)
		switch mode {
		case childEvery4:
			if n%4 == 0 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
		case childHang:
			<-r.Context().Done()
			return
		case childCutHalf:
			cutResponse(w, n)
			return
		}
		helloJSON(w, r)
	}))
}

// cutResponse closes the connection without a response, or, on every 2nd
// request, after half of one.
func cutResponse(w http.ResponseWriter, n int64) {
	c, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if n%2 == 0 {
		// A response cut short: Content-Length promises more.
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"message\":")
		buf.Flush()
	}
	c.Close()
}

// childServer starts the test binary as a server in mode (see serveChild)
// and returns its URL.
func childServer(t *testing.T, mode string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // the child exits when its stdin closes
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("child server: %v", err)
	}
	return "http://" + strings.TrimSpace(line) + "/json"
}

// dedicated is the epoll engine as profdiff load runs it: the tests named
// TestDedicated* run it on every P (GOMAXPROCS as the test binary got it)
// against a server in a child process, so that nothing but its loops'
// yields lets Run's own goroutine, its timers and the context run.
var dedicated = testEngine{name: EngineEpoll, dedicated: true}

// TestDedicated: keep-alive held, every response counted, and non-2xx
// responses counted by status.
func TestDedicated(t *testing.T) {
	if !epollSupported {
		t.Skip("no epoll engine")
	}
	const c = 8
	rep, err := Run(context.Background(), short(childServer(t, childOK), c, dedicated))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, rep)
	if rep.Engine != EngineEpoll || rep.OK == 0 || rep.OK != rep.Sent || rep.ConnectionsOpened != c {
		t.Errorf("engine %s, sent %d, ok %d, opened %d", rep.Engine, rep.Sent, rep.OK, rep.ConnectionsOpened)
	}

	rep, err = Run(context.Background(), short(childServer(t, childEvery4), c, dedicated))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, rep)
	everyFourth(t, rep.Non2xx["503"], rep.Sent, c)
	if rep.SocketErrors != 0 {
		t.Errorf("socket errors %d", rep.SocketErrors)
	}
	if line := firstLine(rep); !strings.HasPrefix(line, "WARNING: ") || !strings.Contains(line, "(503: ") {
		t.Errorf("first line: %s", line)
	}
}

// TestDedicatedTimeouts: with every P held by the loops, requests that get
// no answer time out and are counted, requests in flight at the window's
// close are dropped, and Run returns when the window closes.
func TestDedicatedTimeouts(t *testing.T) {
	if !epollSupported {
		t.Skip("no epoll engine")
	}
	url := childServer(t, childHang)
	start := time.Now()
	rep, err := Run(context.Background(), dedicated.config(Config{URL: url, Connections: 4, Duration: 300 * time.Millisecond, Timeout: 100 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Run took %v for a 300ms window", el)
	}
	checkCounts(t, rep)
	if rep.OK != 0 || rep.SocketErrorKinds[KindTimeout] < 4 || len(rep.SocketErrorKinds) != 1 {
		t.Errorf("ok %d, kinds %v: want only timeouts, at least one per connection", rep.OK, rep.SocketErrorKinds)
	}

	start = time.Now()
	rep, err = Run(context.Background(), dedicated.config(Config{URL: url, Connections: 4, Duration: 100 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("Run took %v: it waited for hanging requests", el)
	}
	checkCounts(t, rep)
	if rep.Sent != 0 || rep.ConnectionsOpened != 4 {
		t.Errorf("sent %d, opened %d", rep.Sent, rep.ConnectionsOpened)
	}
}

// TestDedicatedCancel: a cancelled context ends a Dedicated run at once,
// with the shortened window's report.
func TestDedicatedCancel(t *testing.T) {
	if !epollSupported {
		t.Skip("no epoll engine")
	}
	url := childServer(t, childOK)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tm := time.AfterFunc(300*time.Millisecond, cancel)
	defer tm.Stop()
	start := time.Now()
	rep, err := Run(ctx, dedicated.config(Config{URL: url, Connections: 4, Duration: time.Minute}))
	if !errors.Is(err, context.Canceled) || rep == nil {
		t.Fatalf("err %v, report %v", err, rep)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Run took %v after the cancel", el)
	}
	checkCounts(t, rep)
	if rep.OK == 0 || rep.DurationS <= 0 || rep.DurationS > 10 {
		t.Errorf("partial report: ok %d over %vs", rep.OK, rep.DurationS)
	}
}

// TestDedicatedBrokenServer: responses cut short and connections closed
// without one are read errors, each followed by a reconnect after the
// connection's backoff.
func TestDedicatedBrokenServer(t *testing.T) {
	if !epollSupported {
		t.Skip("no epoll engine")
	}
	const conns = 4
	const window = 300 * time.Millisecond
	rep, err := Run(context.Background(), dedicated.config(Config{URL: childServer(t, childCutHalf), Connections: conns, Duration: window}))
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, rep)
	if rep.OK != 0 || rep.SocketErrorKinds[KindRead] == 0 || rep.SocketErrors != rep.Sent {
		t.Errorf("ok %d, kinds %v, sent %d: want read errors only", rep.OK, rep.SocketErrorKinds, rep.Sent)
	}
	for k := range rep.SocketErrorKinds {
		if k != KindRead && k != KindWrite {
			t.Errorf("unexpected kind %q: %v", k, rep.SocketErrorKinds)
		}
	}
	// 1ms, 2ms, ..., 64ms, then every 100ms: at most maxTries(window)
	// tries per connection (there is no warmup); allow twice that.
	if rep.Reconnects < conns || rep.Reconnects > 2*maxTries(window)*conns {
		t.Errorf("%d reconnects by %d connections in %v", rep.Reconnects, conns, window)
	}
}

// checkCounts checks the invariant every report must keep.
func checkCounts(t *testing.T, r *Report) {
	t.Helper()
	var non2xx int64
	for _, n := range r.Non2xx {
		non2xx += n
	}
	if r.OK+non2xx+r.SocketErrors != r.Sent {
		t.Errorf("ok %d + non-2xx %d + socket errors %d != sent %d", r.OK, non2xx, r.SocketErrors, r.Sent)
	}
	var kinds int64
	for _, n := range r.SocketErrorKinds {
		kinds += n
	}
	if kinds != r.SocketErrors {
		t.Errorf("socket error kinds add up to %d, not %d", kinds, r.SocketErrors)
	}
	if r.Failed() != non2xx+r.SocketErrors {
		t.Errorf("Failed() = %d", r.Failed())
	}
	if r.Non2xx == nil {
		t.Error("Non2xx is nil; want {} when empty")
	}
	if r.DurationS > 0 {
		if want := float64(r.OK) / r.DurationS; r.RPSOK != want {
			t.Errorf("rps_ok %f, want ok/duration = %f", r.RPSOK, want)
		}
	}
}

func firstLine(r *Report) string {
	var b bytes.Buffer
	r.WriteText(&b)
	line, _, _ := strings.Cut(b.String(), "\n")
	return line
}

func TestKeepAliveCountsAddUp(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		var accept, conn, host atomic.Value
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			accept.Store(r.Header.Get("Accept"))
			conn.Store(r.Header.Get("Connection"))
			host.Store(r.Host)
			helloJSON(w, r)
		})
		const c = 8
		rep, err := Run(context.Background(), short(s.URL+"/json", c, e))
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, rep)
		if rep.Sent == 0 || rep.OK != rep.Sent || rep.Failed() != 0 || len(rep.Non2xx) != 0 {
			t.Errorf("sent %d ok %d failed %d non-2xx %v", rep.Sent, rep.OK, rep.Failed(), rep.Non2xx)
		}
		if rep.ConnectionsOpened != c || s.accepted.Load() != c || rep.Connections != c {
			t.Errorf("keep-alive: opened %d, server accepted %d, want %d", rep.ConnectionsOpened, s.accepted.Load(), c)
		}
		if rep.Reconnects != 0 {
			t.Errorf("%d reconnects with keep-alive held", rep.Reconnects)
		}
		if rep.Engine != e.name {
			t.Errorf("engine %q, want %q", rep.Engine, e.name)
		}
		if rep.DurationS != 0.1 || rep.WarmupS != 0.02 || rep.TimeoutS != 8 {
			t.Errorf("duration %v warmup %v timeout %v", rep.DurationS, rep.WarmupS, rep.TimeoutS)
		}
		l := rep.LatencyMS
		if !(l.P50 > 0 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max*1.001+0.001) {
			t.Errorf("latency %+v", l)
		}
		if accept.Load() != DefaultAccept || conn.Load() != "keep-alive" || host.Load() != strings.TrimPrefix(s.URL, "http://") {
			t.Errorf("request headers: Accept %q Connection %q Host %q", accept.Load(), conn.Load(), host.Load())
		}
		if line := firstLine(rep); strings.HasPrefix(line, "WARNING") {
			t.Errorf("warning without failures: %s", line)
		}
		js, _ := json.Marshal(rep)
		for _, want := range []string{`"non_2xx":{}`, `"connections_opened":8`, `"latency_ms":{"p50":`} {
			if !strings.Contains(string(js), want) {
				t.Errorf("JSON lacks %s: %s", want, js)
			}
		}
		if strings.Contains(string(js), "socket_error_kinds") || strings.Contains(string(js), "server_cpu_per_request_us") {
			t.Errorf("empty optional fields in JSON: %s", js)
		}
	})
}

func TestNon2xxShare(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		var n atomic.Int64
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%4 == 0 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			helloJSON(w, r)
		})
		rep, err := Run(context.Background(), short(s.URL+"/json", 4, e))
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, rep)
		n503 := rep.Non2xx["503"]
		if len(rep.Non2xx) != 1 || n503 == 0 || rep.SocketErrors != 0 {
			t.Fatalf("non-2xx %v, socket errors %d", rep.Non2xx, rep.SocketErrors)
		}
		everyFourth(t, n503, rep.Sent, 4)
		if rep.ConnectionsOpened != 4 {
			t.Errorf("opened %d connections: a 503 must not break keep-alive", rep.ConnectionsOpened)
		}
		want := fmt.Sprintf("WARNING: %d of %d requests failed (503: %d): requests/s counts only 2xx responses — this is not saturation", n503, rep.Sent, n503)
		if line := firstLine(rep); line != want {
			t.Errorf("first line\n%s\nwant\n%s", line, want)
		}
		var b bytes.Buffer
		rep.WriteText(&b)
		if !strings.Contains(b.String(), fmt.Sprintf("  non-2xx        503: %d\n", n503)) {
			t.Errorf("report:\n%s", b.String())
		}
	})
}

func TestServerClosesConnections(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		var n atomic.Int64
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			c, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			if n.Add(1)%2 == 0 {
				// A response cut short: Content-Length promises more.
				buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"message\":")
				buf.Flush()
			}
			c.Close()
		})
		const conns = 4
		rep, err := Run(context.Background(), short(s.URL+"/json", conns, e))
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, rep)
		if rep.OK != 0 || rep.SocketErrors == 0 || rep.SocketErrors != rep.Sent {
			t.Fatalf("ok %d, socket errors %d, sent %d", rep.OK, rep.SocketErrors, rep.Sent)
		}
		if rep.SocketErrorKinds[KindRead] == 0 {
			t.Errorf("kinds %v: want read errors", rep.SocketErrorKinds)
		}
		for k := range rep.SocketErrorKinds {
			if k != KindRead && k != KindWrite {
				t.Errorf("unexpected kind %q: %v", k, rep.SocketErrorKinds)
			}
		}
		if ex := rep.SocketErrorExamples[KindRead]; ex == "" {
			t.Errorf("no example of the read errors")
		}
		if rep.ConnectionsOpened <= conns {
			t.Errorf("opened %d connections; every request needs a new one", rep.ConnectionsOpened)
		}
		var b bytes.Buffer
		rep.WriteText(&b)
		out := b.String()
		for _, want := range []string{
			fmt.Sprintf("WARNING: %d of %d requests failed (socket errors: %d)", rep.SocketErrors, rep.Sent, rep.SocketErrors),
			"WARNING: no 2xx response in the measured window",
			"WARNING: keep-alive was not held",
			"first read error: ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		if !strings.HasPrefix(out, "WARNING: ") {
			t.Errorf("the failure warning is not first:\n%s", out)
		}
	})
}

func TestTimeouts(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		release := make(chan struct{})
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release) // before s.Close (cleanup) waits for the handlers
		// Each connection's first request times out 100ms into the
		// 300ms window (timeouts are checked every 10ms), leaving time
		// for a slow machine to see it inside the window.
		cfg := e.config(Config{URL: s.URL, Connections: 2, Duration: 300 * time.Millisecond, Timeout: 100 * time.Millisecond})
		start := time.Now()
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("Run took %v for a 300ms window", el)
		}
		checkCounts(t, rep)
		if rep.OK != 0 || rep.SocketErrorKinds[KindTimeout] < 2 || len(rep.SocketErrorKinds) != 1 {
			t.Errorf("ok %d, kinds %v: want only timeouts, at least one per connection", rep.OK, rep.SocketErrorKinds)
		}
		if line := firstLine(rep); !strings.HasPrefix(line, "WARNING: ") || !strings.Contains(line, "requests failed (socket errors: ") {
			t.Errorf("first line: %s", line)
		}
	})
}

// TestStopsInFlight: requests still in flight when the window closes are
// dropped, and Run does not wait for them to time out.
func TestStopsInFlight(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		release := make(chan struct{})
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		defer close(release)
		start := time.Now()
		rep, err := Run(context.Background(), e.config(Config{URL: s.URL, Connections: 3, Duration: 100 * time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("Run took %v: it waited for hanging requests", el)
		}
		checkCounts(t, rep)
		if rep.Sent != 0 || rep.ConnectionsOpened != 3 {
			t.Errorf("sent %d, opened %d", rep.Sent, rep.ConnectionsOpened)
		}
		if line := firstLine(rep); line != "WARNING: no request completed in the measured window" {
			t.Errorf("first line: %s", line)
		}
	})
}

func TestChunkedAndConnectionClose(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		var n atomic.Int64
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1)%10 == 0 {
				w.Header().Set("Connection", "close")
			}
			io.WriteString(w, "part one,")
			http.NewResponseController(w).Flush() // forces chunked encoding
			io.WriteString(w, "part two")
		})
		rep, err := Run(context.Background(), short(s.URL, 2, e))
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, rep)
		if rep.OK == 0 || rep.Failed() != 0 {
			t.Fatalf("ok %d failed %d %v %v", rep.OK, rep.Failed(), rep.Non2xx, rep.SocketErrorExamples)
		}
		// A connect in flight when the run stops may be accepted by the
		// server and not counted, and one the kernel completed (counted as
		// opened) may not have reached the server's Accept yet when the
		// counter is read (seen: opened 441, accepted 440): at most one
		// per connection either way.
		if acc := s.accepted.Load(); rep.ConnectionsOpened <= 2 || acc < int64(rep.ConnectionsOpened)-2 || acc > int64(rep.ConnectionsOpened)+2 {
			t.Errorf("opened %d, server accepted %d: want a new connection after each Connection: close", rep.ConnectionsOpened, acc)
		}
		// Each connection but the first of each worker was a reconnect,
		// made at once after a complete response; one per worker may have
		// been cut by the stop.
		if re, want := rep.Reconnects, int64(rep.ConnectionsOpened-2); re < want || re > want+2 {
			t.Errorf("%d reconnects for %d connections opened by 2 workers", rep.Reconnects, rep.ConnectionsOpened)
		}
		if line := firstLine(rep); !strings.HasPrefix(line, "WARNING: keep-alive was not held") {
			t.Errorf("first line: %s", line)
		}
	})
}

func TestServerCPUHook(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		s := newServer(t, helloJSON)
		calls := 0
		cfg := short(s.URL, 2, e)
		cfg.ServerCPU = func() time.Duration {
			calls++
			return time.Duration(calls) * time.Second
		}
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if calls != 2 {
			t.Errorf("ServerCPU called %d times, want 2", calls)
		}
		if want := 1e6 / float64(rep.OK); rep.OK == 0 || rep.ServerCPUPerRequestUS != want {
			t.Errorf("server CPU per request %v, want %v", rep.ServerCPUPerRequestUS, want)
		}
		js, _ := json.Marshal(rep)
		if !strings.Contains(string(js), `"server_cpu_per_request_us":`) {
			t.Errorf("JSON: %s", js)
		}
	})
}

func TestContextCancel(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var n atomic.Int64
		s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 2000 {
				cancel()
			}
			helloJSON(w, r)
		})
		start := time.Now()
		rep, err := Run(ctx, e.config(Config{URL: s.URL, Connections: 2, Duration: time.Minute}))
		if !errors.Is(err, context.Canceled) || rep == nil {
			t.Fatalf("err %v, report %v", err, rep)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("Run took %v after the cancel", el)
		}
		checkCounts(t, rep)
		if rep.OK == 0 || rep.DurationS <= 0 || rep.DurationS > 10 {
			t.Errorf("partial report: ok %d over %vs", rep.OK, rep.DurationS)
		}
	})
}

func TestUnreachable(t *testing.T) {
	forEngines(t, func(t *testing.T, e testEngine) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = Run(context.Background(), e.config(Config{URL: "http://" + addr + "/", Connections: 2, Duration: time.Second, Timeout: time.Second}))
		if err == nil || !strings.Contains(err.Error(), "cannot connect to "+addr) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestBadConfig(t *testing.T) {
	ok := "http://127.0.0.1:1/"
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "https://127.0.0.1/", Duration: time.Second}, "only http://"},
		{Config{URL: ok, Connections: -1, Duration: time.Second}, "connections must be positive"},
		{Config{URL: ok, Duration: 0}, "duration must be positive"},
		{Config{URL: ok, Duration: time.Second, Warmup: -time.Second}, "warmup must not be negative"},
		{Config{URL: ok, Duration: time.Second, Timeout: -time.Second}, "timeout must be positive"},
		{Config{URL: ok, Duration: time.Second, Engine: "threads"}, `unknown engine "threads"`},
	} {
		if _, err := Run(context.Background(), c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestDefaultConnections(t *testing.T) {
	if got, want := DefaultConnections(), min(256, 64*runtime.NumCPU()); got != want {
		t.Errorf("DefaultConnections() = %d, want %d", got, want)
	}
}

func TestReportTextAndJSON(t *testing.T) {
	r := &Report{
		URL: "http://127.0.0.1:8080/json", Engine: "epoll", Connections: 4, ConnectionsOpened: 6, Reconnects: 9, DurationS: 2, Sent: 1000, OK: 900,
		Non2xx:           map[string]int64{"503": 60, "404": 10},
		SocketErrors:     30,
		SocketErrorKinds: map[string]int64{"timeout": 10, "read": 20}, SocketErrorExamples: map[string]string{"read": "EOF", "timeout": "i/o timeout"},
		RPSOK: 450, LatencyMS: Latency{P50: 1, P90: 2, P99: 3, Max: 4}, ServerCPUPerRequestUS: 12.5,
		WarmupS: 1, WarmupFailed: 3, TimeoutS: 8,
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `WARNING: 100 of 1000 requests failed (404: 10, 503: 60, socket errors: 30): requests/s counts only 2xx responses — this is not saturation
WARNING: keep-alive was not held: 6 connections opened for 4 workers (reconnects after errors or Connection: close); dials cost the server extra work
WARNING: 3 requests failed during the warmup (not counted)
GET http://127.0.0.1:8080/json
  connections    4 (6 opened), epoll engine
  reconnects     9 (after failures, each after a backoff of 1ms doubling to 100ms, or after Connection: close)
  window         2.00s measured after 1.00s warmup (discarded); timeout 8s
  requests       1000 in the window: 900 2xx, 100 failed
  requests/s     450.0 (2xx only)
  latency (ms)   p50 1.000  p90 2.000  p99 3.000  max 4.000 (2xx responses)
  non-2xx        404: 10, 503: 60
  socket errors  30 (read: 20, timeout: 10)
    first read error: EOF
    first timeout error: i/o timeout
  server CPU     12.50 µs per 2xx response
`
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
	js1, _ := json.Marshal(r)
	js2, _ := json.Marshal(r)
	if !bytes.Equal(js1, js2) || !strings.Contains(string(js1), `"non_2xx":{"404":10,"503":60}`) ||
		!strings.Contains(string(js1), `"socket_error_kinds":{"read":20,"timeout":10}`) || !strings.Contains(string(js1), `"reconnects":9,`) {
		t.Errorf("JSON: %s", js1)
	}
	r.SetServerCPU(0)
	if r.ServerCPUPerRequestUS != 12.5 {
		t.Error("SetServerCPU(0) changed the field")
	}
}

// TestDefaultEngine: epoll on Linux, goroutines elsewhere, and a Config
// without an engine runs the default one.
func TestDefaultEngine(t *testing.T) {
	want := EngineGoroutines
	if runtime.GOOS == "linux" {
		want = EngineEpoll
	}
	if got := DefaultEngine(); got != want {
		t.Errorf("DefaultEngine() = %q on %s, want %q", got, runtime.GOOS, want)
	}
	s := newServer(t, helloJSON)
	rep, err := Run(context.Background(), Config{URL: s.URL, Connections: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Engine != want || rep.OK == 0 {
		t.Errorf("engine %q, ok %d", rep.Engine, rep.OK)
	}
}
