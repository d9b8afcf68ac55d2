// Package loadgen is a closed-loop HTTP/1.1 load generator in the manner of
// wrk and crank's wrk job: C keep-alive connections, each with one request
// in flight, the next request sent as soon as the response has been read. A
// warmup is run and discarded, then a measured window is counted.
//
// The client is a minimal HTTP/1.1 writer and an incremental response parser
// (parser) that validates every status line and reads every body by its
// Content-Length, chunked encoding or the close, without allocating; the
// request bytes are built once. net/http's client costs about twice wrk's
// CPU per request, and on a small machine the generator shares the CPUs with
// the server it measures, so every microsecond it spends is taken from the
// server.
//
// Two engines drive the connections (Config.Engine):
//   - "epoll" (the default on Linux) works like wrk: event loops, each
//     owning its share of the connections as non-blocking sockets in its
//     own epoll set. A request costs a write and a read system call and a
//     share of an epoll_wait, and no goroutine switch. Timeouts are checked
//     every 10ms. With Config.Dedicated (profdiff load) there is one loop
//     per P and a loop keeps its P while it waits, like a wrk thread its
//     CPU (its epoll_wait, read and write are raw system calls);
//     otherwise GOMAXPROCS-1 loops (at least one) hand their P back while
//     they wait, so other goroutines of the process are not held up.
//   - "goroutines" (the default elsewhere) runs one goroutine per
//     connection over net.Conn, with the connection's deadline as the
//     timeout. It costs more CPU per request (the runtime's netpoller, an
//     extra read that finds no data, goroutine wake-ups).
//
// On 2 CPUs shared with a Go net/http JSON server, the epoll engine in
// Dedicated mode spends a little less of the generator's own CPU per 2xx
// response than wrk, and the goroutines engine as much or a little more.
// cmd/loadcmp compares requests/s with wrk's (target: 95% of wrk's); its
// measurements are in workloads/README.md (Checked against wrk).
//
// What is counted (Report):
//   - requests/s counts only 2xx responses. Non-2xx responses are counted by
//     status code, and socket errors (connect, read, write, timeout) by kind;
//     a response that cannot be parsed is a read error, as in wrk. OK +
//     sum(Non2xx) + SocketErrors == Sent always holds.
//   - latency (p50/p90/p99/max, from an HDR histogram with 3 significant
//     digits, in µs) is that of the 2xx responses completed in the measured
//     window, from writing the request to reading the last byte of the body.
//   - a request belongs to the window in which it completed or failed;
//     requests still in flight when the window closes are not counted.
//   - ConnectionsOpened counts every successful connect: with keep-alive
//     held it equals Connections. A connection that fails (or that is told
//     Connection: close) is opened again, so the number shows it, and
//     Reconnects counts those connects, failed ones included. After a
//     failure a connection waits before it reconnects, 1ms doubling to
//     100ms while failures continue (BackoffMin, BackoffMax).
//
// Every failure is counted and shown: WriteText puts a WARNING on its first
// line when any request failed, because throughput that includes errors is
// not saturation.
//
// Run returns numbers (a Report) and errors for a bad Config or a server
// that accepts no connection; it never prints or exits. A cancelled
// context ends it at once (requests in flight are cut) with the shortened
// window's report. Every loop in it is bounded by the window and the
// timeout.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Config describes one run.
type Config struct {
	URL         string        // http://127.0.0.1:PORT/path
	Connections int           // 0 = DefaultConnections()
	Duration    time.Duration // measured window
	Warmup      time.Duration // discarded
	Timeout     time.Duration // per request, also the connect timeout; 0 = 8s
	Header      http.Header   // extra request headers; they replace the defaults (TFB json Accept header, Connection: keep-alive) of the same name

	// ServerCPU, when set, returns the server's cumulative CPU time (user +
	// system). Run calls it when the measured window opens and when it
	// closes, and fills Report.ServerCPUPerRequestUS with the difference per
	// 2xx response. The generator cannot see the server's CPU by itself.
	ServerCPU func() time.Duration

	// Engine is "epoll", "goroutines" or "" for the best one available
	// (DefaultEngine).
	Engine string

	// Dedicated says the process does nothing but generate this load (as
	// profdiff load does), so the epoll engine may run one loop per P that
	// keeps its P while it waits, like wrk's threads. Otherwise it runs
	// GOMAXPROCS-1 loops (at least one) that give their P back while they
	// wait, so that other goroutines (a profile capture, an in-process
	// server) are not held up; on two CPUs that costs about a tenth of the
	// requests/s wrk reaches. The goroutines engine ignores it.
	Dedicated bool
}

// DefaultTimeout is the per-request timeout when Config.Timeout is 0: the
// 8 seconds TechEmpower passes to wrk.
const DefaultTimeout = 8 * time.Second

// DefaultConnections is min(256, 64×NumCPU): crank's wrk default of 256
// connections on machines with 4 or more CPUs, fewer on small machines where
// a generator sharing the CPUs with the server would mostly measure its own
// scheduling (128 on 2 CPUs, 64 on 1).
func DefaultConnections() int {
	return min(256, 64*runtime.NumCPU())
}

// Engines.
const (
	EngineEpoll      = "epoll"
	EngineGoroutines = "goroutines"
)

// DefaultEngine is the engine Run uses when Config.Engine is empty: epoll
// on Linux, where it is available, and goroutines elsewhere. Both count the
// same things the same way (the tests run every case against both); epoll
// costs less CPU per request, and on a machine the generator shares with the
// server that CPU is taken from the server: on 2 CPUs the goroutines engine
// reached 86-88% of wrk's requests/s at 64 connections, epoll more than wrk
// (see the README's peer check).
func DefaultEngine() string {
	if epollSupported {
		return EngineEpoll
	}
	return EngineGoroutines
}

// Socket error kinds, the keys of Report.SocketErrorKinds.
const (
	KindConnect = "connect"
	KindRead    = "read"
	KindWrite   = "write"
	KindTimeout = "timeout"
)

var kindNames = [...]string{KindConnect, KindRead, KindWrite, KindTimeout}

const (
	kConnect = iota
	kRead
	kWrite
	kTimeout
	nKinds
)

// unit is what an engine runs: a goroutine with its connections.
type unit interface {
	// run opens the unit's connections, calls dialed.Done, waits for the
	// runner's start, then drives requests until the window closes or the
	// run is stopped, and closes its connections.
	run(dialed *sync.WaitGroup)
	// opened tells, once dialed is done, how many connections are open and
	// the first connect error.
	opened() (int, error)
	// interrupt is called once after the run was stopped, to cut requests
	// in flight short.
	interrupt()
	stats() *counters
}

// Run drives cfg.URL until the warmup and the measured window have passed or
// ctx is done. Its error is for a bad Config or a server that accepts none of
// the connections; failed requests are counted in the Report. When ctx ends
// early Run returns the report of the shortened window together with
// ctx.Err().
func Run(ctx context.Context, cfg Config) (*Report, error) {
	st, err := cfg.settle()
	if err != nil {
		return nil, err
	}
	r := &runner{
		tg:        st.tg,
		timeout:   st.timeout,
		dedicated: cfg.Dedicated,
		start:     make(chan struct{}),
		stopc:     make(chan struct{}),
		// Histograms in µs up to twice the timeout (a response cannot take longer).
		histMax: max(2*st.timeout, 2*time.Second).Microseconds(),
	}
	r.dialCtx, r.cancelDial = context.WithCancel(ctx)
	defer r.cancelDial()

	var units []unit
	if st.engine == EngineEpoll {
		if units, err = newLoops(r, st.conns); err != nil {
			return nil, err
		}
	} else {
		units = newWorkers(r, st.conns)
	}
	var wg, dialed sync.WaitGroup
	dialed.Add(len(units))
	wg.Add(len(units))
	for _, u := range units {
		go func() {
			defer wg.Done()
			u.run(&dialed)
		}()
	}
	// Every connection is opened first, so the warmup starts with all of
	// them open, as in wrk.
	dialed.Wait()
	if opened, firstErr := openedCount(units); opened == 0 {
		r.stop()
		close(r.start)
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if firstErr == nil {
			firstErr = errors.New("the server closed every connection before the first request")
		}
		return nil, fmt.Errorf("cannot connect to %s: %v", st.tg.addr, firstErr)
	}
	w := r.runWindow(ctx, cfg)
	for _, u := range units {
		u.interrupt()
	}
	wg.Wait()
	return r.report(cfg, st, units, w), w.ctxErr
}

// settings are a Config's checked values, defaults filled in.
type settings struct {
	tg      *target
	conns   int
	timeout time.Duration
	engine  string
}

// settle checks c and fills in the defaults.
func (c Config) settle() (settings, error) {
	tg, err := parseTarget(c.URL, c.Header)
	if err != nil {
		return settings{}, err
	}
	st := settings{tg: tg, conns: c.Connections, timeout: c.Timeout, engine: c.Engine}
	switch {
	case st.conns == 0:
		st.conns = DefaultConnections()
	case st.conns < 0:
		return settings{}, fmt.Errorf("connections must be positive, not %d", st.conns)
	case st.conns > 1<<16:
		return settings{}, fmt.Errorf("%d connections is more than one host can open", st.conns)
	}
	if c.Duration <= 0 {
		return settings{}, fmt.Errorf("duration must be positive, not %v", c.Duration)
	}
	if c.Warmup < 0 {
		return settings{}, fmt.Errorf("warmup must not be negative, not %v", c.Warmup)
	}
	switch {
	case st.timeout == 0:
		st.timeout = DefaultTimeout
	case st.timeout < 0:
		return settings{}, fmt.Errorf("timeout must be positive, not %v", st.timeout)
	}
	switch st.engine {
	case "":
		st.engine = DefaultEngine()
	case EngineGoroutines:
	case EngineEpoll:
		if !epollSupported {
			return settings{}, fmt.Errorf("engine %q is not available on %s", st.engine, runtime.GOOS)
		}
	default:
		return settings{}, fmt.Errorf("unknown engine %q (want %s or %s)", st.engine, EngineEpoll, EngineGoroutines)
	}
	return st, nil
}

// openedCount sums the units' open connections, with the first connect
// error.
func openedCount(units []unit) (int, error) {
	opened := 0
	var firstErr error
	for _, u := range units {
		n, err := u.opened()
		opened += n
		if firstErr == nil {
			firstErr = err
		}
	}
	return opened, firstErr
}

// window is what runWindow saw of the measured window.
type window struct {
	cpu0, cpu1 time.Duration // ServerCPU at its opening and close
	stopAt     time.Time     // when the units were told to stop
	ctxErr     error         // ctx's error when it ended the window early
}

// runWindow starts the units, waits out the warmup and the measured window
// (or ctx's end) reading the server's CPU at both edges, and stops them.
func (r *runner) runWindow(ctx context.Context, cfg Config) window {
	r.measure = time.Now().Add(cfg.Warmup)
	r.end = r.measure.Add(cfg.Duration)
	close(r.start)

	var w window
	if wait(ctx, r.measure) && cfg.ServerCPU != nil {
		w.cpu0 = cfg.ServerCPU()
	}
	if !wait(ctx, r.end) {
		w.ctxErr = ctx.Err()
	}
	if w.ctxErr == nil && cfg.ServerCPU != nil {
		w.cpu1 = cfg.ServerCPU()
	}
	w.stopAt = time.Now()
	r.stop()
	return w
}

// report merges the units' counters into the run's Report.
func (r *runner) report(cfg Config, st settings, units []unit, w window) *Report {
	rep := &Report{
		URL:         cfg.URL,
		Engine:      st.engine,
		Connections: st.conns,
		Non2xx:      map[string]int64{},
		WarmupS:     cfg.Warmup.Seconds(),
		TimeoutS:    st.timeout.Seconds(),
	}
	windowEnd := r.end
	if w.stopAt.Before(windowEnd) {
		windowEnd = w.stopAt
	}
	if d := windowEnd.Sub(r.measure); d > 0 {
		rep.DurationS = d.Seconds()
	}
	hist := hdrhistogram.New(1, r.histMax, 3)
	var maxUS int64
	for _, u := range units {
		c := u.stats()
		rep.add(c)
		hist.Merge(c.hist)
		maxUS = max(maxUS, c.maxUS)
	}
	if rep.DurationS > 0 {
		rep.RPSOK = float64(rep.OK) / rep.DurationS
	}
	if hist.TotalCount() > 0 {
		rep.LatencyMS = Latency{
			P50: float64(hist.ValueAtPercentile(50)) / 1000,
			P90: float64(hist.ValueAtPercentile(90)) / 1000,
			P99: float64(hist.ValueAtPercentile(99)) / 1000,
			Max: float64(maxUS) / 1000,
		}
	}
	if cfg.ServerCPU != nil && w.ctxErr == nil {
		rep.SetServerCPU(w.cpu1 - w.cpu0)
	}
	return rep
}

// add counts one unit's requests, responses and errors into rep.
func (rep *Report) add(c *counters) {
	rep.ConnectionsOpened += c.dials
	rep.Reconnects += c.reconnects
	rep.Sent += c.sent
	rep.OK += c.ok
	rep.WarmupFailed += c.warmupFailed
	for code, n := range c.status {
		if n > 0 {
			rep.Non2xx[fmt.Sprint(code)] += n
		}
	}
	for k, n := range c.sock {
		if n == 0 {
			continue
		}
		rep.SocketErrors += n
		if rep.SocketErrorKinds == nil {
			rep.SocketErrorKinds = map[string]int64{}
			rep.SocketErrorExamples = map[string]string{}
		}
		rep.SocketErrorKinds[kindNames[k]] += n
		if _, ok := rep.SocketErrorExamples[kindNames[k]]; !ok {
			rep.SocketErrorExamples[kindNames[k]] = c.example[k]
		}
	}
}

// wait sleeps until t; false when ctx ended first.
func wait(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// runner is the state the units share; it is read-only once start is
// closed, except for stopped.
type runner struct {
	tg         *target
	timeout    time.Duration
	dedicated  bool
	histMax    int64
	dialCtx    context.Context // canceled by stop
	cancelDial context.CancelFunc

	start   chan struct{} // closed when measure and end are set
	measure time.Time     // the measured window opens
	end     time.Time     // and closes

	stopped atomic.Bool
	stopc   chan struct{} // closed by stop
}

func (r *runner) stop() {
	if r.stopped.CompareAndSwap(false, true) {
		r.cancelDial()
		close(r.stopc)
	}
}

// running reports whether requests should still be sent at now.
func (r *runner) running(now time.Time) bool {
	return now.Before(r.end) && !r.stopped.Load()
}

// counters are one unit's results, merged after the run.
type counters struct {
	r            *runner
	dials        int
	reconnects   int64 // connects tried after each connection's first
	sent, ok     int64
	warmupFailed int64
	status       [1000]int64 // non-2xx by code
	sock         [nKinds]int64
	example      [nKinds]string
	hist         *hdrhistogram.Histogram
	maxUS        int64
}

func newCounters(r *runner) counters {
	return counters{r: r, hist: hdrhistogram.New(1, r.histMax, 3)}
}

// inWindow tells where a request that finished at t belongs: -1 warmup,
// 0 measured window, 1 after it (or after a stop: not counted).
func (c *counters) inWindow(t time.Time) int {
	switch {
	case t.Before(c.r.measure):
		return -1
	case !t.Before(c.r.end) || c.r.stopped.Load():
		return 1
	}
	return 0
}

// fail counts a request (or a connect) that failed at at.
func (c *counters) fail(kind int, err error, at time.Time) {
	switch c.inWindow(at) {
	case -1:
		c.warmupFailed++
	case 0:
		c.sent++
		c.sock[kind]++
		if c.example[kind] == "" && err != nil {
			c.example[kind] = err.Error()
		}
	}
}

// done counts a response that finished at at after lat.
func (c *counters) done(status int, lat time.Duration, at time.Time) {
	switch c.inWindow(at) {
	case -1:
		if status < 200 || status > 299 {
			c.warmupFailed++
		}
		return
	case 1:
		return
	}
	c.sent++
	if status < 200 || status > 299 {
		c.status[status%1000]++
		return
	}
	c.ok++
	us := lat.Microseconds()
	c.maxUS = max(c.maxUS, us)
	c.hist.RecordValue(min(us, c.r.histMax))
}

// The backoff of a connection after a failure: a failed connect, read or
// write (a reset, a timeout, a response that cannot be parsed) closes the
// connection, and it is opened again only after BackoffMin, doubled for
// every further failure in a row up to BackoffMax; a complete response
// resets it. Without it a server that resets every connection is redialled
// as fast as the kernel allows (about 10,000 connects a second here, and
// eight short runs left 64,002 sockets in TIME_WAIT); with it a connection
// that keeps failing tries about 10 times a second. A connection closed
// after a complete response (Connection: close) is opened again at once.
// The waits end when the run stops, and the window bounds their number.
const (
	BackoffMin = time.Millisecond
	BackoffMax = 100 * time.Millisecond
)

// nextBackoff is the wait after a failure that followed a wait of b (0: the
// first failure since a response).
func nextBackoff(b time.Duration) time.Duration {
	if b < BackoffMin {
		return BackoffMin
	}
	return min(2*b, BackoffMax)
}

// errExtraData is a response followed by bytes nobody asked for.
var errExtraData = fmt.Errorf("%w: data after the response", errProtocol)

// kindOf classifies a read or write error: deadlines are timeouts, the rest
// keep the kind of the operation that failed (a response that cannot be
// parsed is a read error).
func kindOf(err error, op int) int {
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return kTimeout
	}
	return op
}
