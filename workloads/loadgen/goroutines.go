package loadgen

import (
	"io"
	"net"
	"sync"
	"time"
)

// worker is the goroutines engine's unit: one goroutine, one net.Conn.
type worker struct {
	counters
	dialer net.Dialer

	mu   sync.Mutex // guards conn against interrupt; only the worker writes it
	conn net.Conn

	p        parser
	buf      []byte
	dialErr  error // of the first dial
	deadline time.Time
	backoff  time.Duration // the wait before the next connect; a response resets it
	dialed   bool          // a connect was tried: the next one is a reconnect
}

func newWorkers(r *runner, conns int) []unit {
	us := make([]unit, conns)
	for i := range us {
		us[i] = &worker{counters: newCounters(r), dialer: net.Dialer{Timeout: r.timeout}, buf: make([]byte, 16<<10)}
	}
	return us
}

func (w *worker) stats() *counters { return &w.counters }

func (w *worker) opened() (int, error) {
	if w.conn != nil {
		return 1, nil
	}
	return 0, w.dialErr
}

func (w *worker) interrupt() {
	w.mu.Lock()
	if w.conn != nil {
		w.conn.Close()
	}
	w.mu.Unlock()
}

func (w *worker) run(dialed *sync.WaitGroup) {
	r := w.r
	w.dialErr = w.connect()
	dialed.Done()
	<-r.start
	defer w.closeConn()
	if w.dialErr != nil {
		w.fail(kConnect, w.dialErr, time.Now())
		w.sleepBackoff()
	}
	req := r.tg.request
	now := time.Now()
	for r.running(now) {
		if w.conn == nil {
			if err := w.connect(); err != nil {
				w.fail(kConnect, err, time.Now())
				w.sleepBackoff()
				now = time.Now()
				continue
			}
			now = time.Now()
		}
		start := now
		w.setDeadline(start)
		if _, err := w.conn.Write(req); err != nil {
			w.failed(kindOf(err, kWrite), err)
			now = time.Now()
			continue
		}
		status, keep, err := w.readResponse()
		now = time.Now()
		if err != nil {
			w.failed(kindOf(err, kRead), err)
			now = time.Now()
			continue
		}
		w.done(status, now.Sub(start), now)
		w.backoff = 0
		if !keep {
			w.closeConn()
		}
	}
}

// failed counts a request that failed on an open connection, closes the
// connection and waits out the connection's backoff before the loop
// reconnects: a server that resets every connection is not redialled in a
// busy loop (about 10,000 connects a second, each leaving a socket in
// TIME_WAIT).
func (w *worker) failed(kind int, err error) {
	w.fail(kind, err, time.Now())
	w.closeConn()
	w.sleepBackoff()
}

// readResponse reads one response from the connection.
func (w *worker) readResponse() (status int, keep bool, err error) {
	n := 0 // bytes in buf not consumed yet
	w.p = parser{}
	for {
		used, done, err := w.p.feed(w.buf[:n])
		if err != nil {
			return 0, false, err
		}
		n = copy(w.buf, w.buf[used:n])
		if done {
			if n > 0 {
				return 0, false, errExtraData
			}
			return w.p.status, w.p.keep, nil
		}
		m, err := w.conn.Read(w.buf[n:])
		n += m
		if m > 0 {
			continue
		}
		if err == io.EOF {
			done, err := w.p.eof(n)
			if done {
				return w.p.status, false, nil
			}
			return 0, false, err
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		return 0, false, err
	}
}

// setDeadline gives the request that starts now at least the whole timeout.
// Moving a deadline costs a timer update in the runtime, so the deadline is
// set 1% of the timeout further out and only moved once a request would get
// less than the timeout: every request gets between 100% and 101% of it.
func (w *worker) setDeadline(now time.Time) {
	want := now.Add(w.r.timeout)
	if want.After(w.deadline) {
		w.deadline = want.Add(w.r.timeout / 100)
		w.conn.SetDeadline(w.deadline)
	}
}

// connect dials the worker's connection. A dial that succeeds after the run
// was stopped is closed again.
func (w *worker) connect() error {
	if w.dialed {
		w.reconnects++
	}
	w.dialed = true
	c, err := w.dialer.DialContext(w.r.dialCtx, "tcp", w.r.tg.addr)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.r.stopped.Load() {
		c.Close()
		return net.ErrClosed
	}
	w.conn = c
	w.dials++
	w.deadline = time.Time{}
	return nil
}

func (w *worker) closeConn() {
	w.mu.Lock()
	if w.conn != nil {
		w.conn.Close()
		w.conn = nil
	}
	w.mu.Unlock()
}

// sleepBackoff waits after a failure (a connect, a read or a write; see
// nextBackoff), or until the run stops.
func (w *worker) sleepBackoff() {
	w.backoff = nextBackoff(w.backoff)
	t := time.NewTimer(w.backoff)
	select {
	case <-t.C:
	case <-w.r.stopc:
		t.Stop()
	}
}
