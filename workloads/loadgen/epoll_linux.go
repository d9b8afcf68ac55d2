//go:build linux

package loadgen

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const epollSupported = true

// checkEvery is how often a loop looks for timed-out requests and
// connections due for a retry.
const checkEvery = 10 * time.Millisecond

// waitFor is the longest a loop waits in epoll_wait, so at most how long it
// takes to notice a stop.
const waitFor = 10 * time.Millisecond

// Connection states.
const (
	csDown       = iota // no socket; connect again at retryAt
	csConnecting        // non-blocking connect in progress
	csIdle              // connected, no request in flight
	csWriting           // request partly written, waiting for EPOLLOUT
	csWaiting           // request written, reading the response
)

// econn is one connection of a loop.
type econn struct {
	idx     int32
	fd      int
	state   int
	since   time.Time     // when the connect or the request started
	retryAt time.Time     // csDown: when to connect again
	backoff time.Duration // the wait before the next connect; a response resets it
	dialed  bool          // a connect was tried: the next one is a reconnect
	woff    int           // bytes of the request written
	p       parser
	buf     []byte
	n       int   // bytes in buf not consumed yet
	dialErr error // first connect error, before the start
}

// loop is the epoll engine's unit: one goroutine, one epoll set, its share
// of the connections as non-blocking sockets (like one wrk thread).
type loop struct {
	counters
	ep      int
	family  int
	sa      syscall.Sockaddr
	conns   []*econn
	events  []syscall.EpollEvent
	started bool
	nOpened int
	openErr error
}

// loopsFor is the number of loops: one per P when the process is dedicated
// to the load, else one less, so that a P stays free for the rest of the
// process and sysmon does not find every P in a system call (see
// epollWaitRaw).
func loopsFor(procs int, dedicated bool) int {
	if dedicated {
		return procs
	}
	return max(1, procs-1)
}

// newLoops resolves the target and makes min(conns, GOMAXPROCS) loops.
func newLoops(r *runner, conns int) ([]unit, error) {
	ip, pn, err := resolveTarget(r.dialCtx, r.tg.addr, r.timeout)
	if err != nil {
		return nil, err
	}
	// Each loop gets its own Sockaddr: syscall.Connect writes into it.
	family := syscall.AF_INET
	newSockaddr := func() syscall.Sockaddr {
		if ip4 := ip.To4(); ip4 != nil {
			s := &syscall.SockaddrInet4{Port: pn}
			copy(s.Addr[:], ip4)
			return s
		}
		s := &syscall.SockaddrInet6{Port: pn}
		copy(s.Addr[:], ip.To16())
		return s
	}
	if ip.To4() == nil {
		family = syscall.AF_INET6
	}
	n := min(conns, loopsFor(runtime.GOMAXPROCS(0), r.dedicated))
	loops := make([]*loop, n)
	for i := range loops {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			for _, l := range loops[:i] {
				syscall.Close(l.ep)
			}
			return nil, os.NewSyscallError("epoll_create1", err)
		}
		loops[i] = &loop{counters: newCounters(r), ep: ep, family: family, sa: newSockaddr(), events: make([]syscall.EpollEvent, 256)}
	}
	for i := range conns {
		l := loops[i%n]
		l.conns = append(l.conns, &econn{idx: int32(len(l.conns)), fd: -1, buf: make([]byte, 16<<10)})
	}
	us := make([]unit, n)
	for i, l := range loops {
		us[i] = l
	}
	return us, nil
}

// resolveTarget returns the address the loops connect to: addr's IP, or,
// for a host name, the first of its addresses that accepts a connection
// (see pickAddr).
func resolveTarget(ctx context.Context, addr string, timeout time.Duration) (net.IP, int, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, 0, err
	}
	pn, err := strconv.Atoi(port)
	if err != nil || pn <= 0 || pn > 65535 {
		return nil, 0, fmt.Errorf("bad port %q", port)
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip, pn, nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, 0, fmt.Errorf("cannot connect to %s: %v", addr, err)
	}
	if len(addrs) == 0 {
		return nil, 0, fmt.Errorf("cannot connect to %s: no address", addr)
	}
	ips := make([]net.IP, len(addrs))
	for i, a := range addrs {
		ips[i] = a.IP
	}
	return pickAddr(ctx, ips, pn, timeout), pn, nil
}

// pickAddr chooses among a host name's addresses, in the resolver's order,
// as wrk does: the first that accepts a test connection (closed at once),
// else the first, whose connect errors the run then reports. With a single
// address there is nothing to test. (The goroutines engine's dialer tries
// the addresses in turn on every connect; the loops connect to one.) So a
// server that listens on ::1 only is reached through a name that resolves
// to 127.0.0.1 first, as the goroutines engine reaches it.
func pickAddr(ctx context.Context, ips []net.IP, port int, timeout time.Duration) net.IP {
	if len(ips) == 1 {
		return ips[0]
	}
	d := net.Dialer{Timeout: timeout}
	for _, ip := range ips {
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), strconv.Itoa(port)))
		if err == nil {
			c.Close()
			return ip
		}
	}
	return ips[0]
}

func (l *loop) stats() *counters     { return &l.counters }
func (l *loop) opened() (int, error) { return l.nOpened, l.openErr }

// interrupt does nothing: a loop notices the stop within waitFor.
func (l *loop) interrupt() {}

func (l *loop) run(dialed *sync.WaitGroup) {
	r := l.r
	defer l.closeAll()

	// Open every connection before the start.
	now := time.Now()
	for _, c := range l.conns {
		l.connect(c, now)
	}
	for l.anyConnecting() && r.dialCtx.Err() == nil {
		l.poll()
		l.check(time.Now())
	}
	for _, c := range l.conns {
		if c.state == csIdle {
			l.nOpened++
		} else if l.openErr == nil {
			l.openErr = c.dialErr
		}
	}
	dialed.Done()
	<-r.start

	l.started = true
	now = time.Now()
	for _, c := range l.conns {
		switch c.state {
		case csIdle:
			l.send(c, now)
		case csDown:
			// The connect before the start failed: count it now. (A
			// connection the server closed before any request was sent
			// is no failure; it is opened again, which shows in
			// ConnectionsOpened.)
			if c.dialErr != nil {
				l.fail(kConnect, c.dialErr, now)
			}
		}
	}
	next := now.Add(checkEvery)
	for r.running(now) {
		l.poll()
		now = time.Now()
		if !now.Before(next) {
			l.check(now)
			next = now.Add(checkEvery)
			if r.dedicated {
				// The loop holds its P (see epollWaitRaw): let the
				// other goroutines run.
				runtime.Gosched()
			}
		}
	}
}

func (l *loop) anyConnecting() bool {
	for _, c := range l.conns {
		if c.state == csConnecting {
			return true
		}
	}
	return false
}

// poll waits up to waitFor for events and handles them.
func (l *loop) poll() {
	var n int
	var err error
	if l.r.dedicated {
		n, err = epollWaitRaw(l.ep, l.events, int(waitFor/time.Millisecond))
	} else {
		n, err = syscall.EpollWait(l.ep, l.events, int(waitFor/time.Millisecond))
	}
	if err != nil {
		if err != syscall.EINTR {
			// Cannot happen with a valid epoll set; do not spin.
			time.Sleep(checkEvery)
		}
		return
	}
	for _, ev := range l.events[:n] {
		c := l.conns[ev.Fd]
		e := ev.Events
		switch c.state {
		case csConnecting:
			if e&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
				l.finishConnect(c)
			}
		case csWriting:
			if e&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) != 0 {
				l.write(c)
			}
		case csWaiting:
			if e&(syscall.EPOLLIN|syscall.EPOLLERR|syscall.EPOLLHUP|syscall.EPOLLRDHUP) != 0 {
				l.read(c)
			}
		case csIdle:
			// Nothing was asked: the server closed the connection or sent
			// something unasked. Drop it; it is opened again when needed.
			if e&(syscall.EPOLLIN|syscall.EPOLLERR|syscall.EPOLLHUP|syscall.EPOLLRDHUP) != 0 {
				l.closeConn(c)
				l.backOff(c, time.Now())
			}
		}
	}
}

// check handles timeouts and retries.
func (l *loop) check(now time.Time) {
	for _, c := range l.conns {
		switch c.state {
		case csConnecting:
			if now.Sub(c.since) >= l.r.timeout {
				l.connectFailed(c, os.ErrDeadlineExceeded, now)
			}
		case csWriting, csWaiting:
			if now.Sub(c.since) >= l.r.timeout {
				l.failed(c, kTimeout, l.opError("read", os.ErrDeadlineExceeded), now)
			}
		case csDown:
			if l.started && l.r.running(now) && !now.Before(c.retryAt) {
				l.connect(c, now)
			}
		}
	}
}

func (l *loop) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Addr: opAddr(l.r.tg.addr), Err: err}
}

type opAddr string

func (a opAddr) Network() string { return "tcp" }
func (a opAddr) String() string  { return string(a) }

func (l *loop) connect(c *econn, now time.Time) {
	if c.dialed {
		l.reconnects++
	}
	c.dialed = true
	fd, err := syscall.Socket(l.family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		l.connectFailed(c, os.NewSyscallError("socket", err), now)
		return
	}
	syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	if err := syscall.Connect(fd, l.sa); err != nil && err != syscall.EINPROGRESS {
		syscall.Close(fd)
		l.connectFailed(c, os.NewSyscallError("connect", err), now)
		return
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP, Fd: c.idx}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		syscall.Close(fd)
		l.connectFailed(c, os.NewSyscallError("epoll_ctl", err), now)
		return
	}
	c.fd, c.state, c.since = fd, csConnecting, now
}

func (l *loop) finishConnect(c *econn) {
	now := time.Now()
	errno, err := syscall.GetsockoptInt(c.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
	if err == nil && errno != 0 {
		err = syscall.Errno(errno)
	}
	if err == nil {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: c.idx}
		err = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, c.fd, &ev)
	}
	if err != nil {
		l.connectFailed(c, os.NewSyscallError("connect", err), now)
		return
	}
	c.state = csIdle
	l.dials++
	if l.started && l.r.running(now) {
		l.send(c, now)
	}
}

// connectFailed counts a failed connect (after the start; before it, the
// error is kept for Run) and schedules a retry after the connection's
// backoff.
func (l *loop) connectFailed(c *econn, err error, now time.Time) {
	l.closeConn(c)
	err = l.opError("dial", err)
	if l.started {
		l.fail(kConnect, err, now)
	} else if c.dialErr == nil {
		c.dialErr = err
	}
	l.backOff(c, now)
}

// backOff schedules the next connect of a connection that is down after
// its backoff (see nextBackoff); check makes it.
func (l *loop) backOff(c *econn, now time.Time) {
	c.backoff = nextBackoff(c.backoff)
	c.retryAt = now.Add(c.backoff)
}

// failed counts a request that failed on an open connection, closes the
// connection and schedules a reconnect after its backoff: a server that
// resets every connection is not redialled in a busy loop.
func (l *loop) failed(c *econn, kind int, err error, now time.Time) {
	l.fail(kind, err, now)
	l.closeConn(c)
	l.backOff(c, now)
}

func (l *loop) closeConn(c *econn) {
	if c.fd >= 0 {
		syscall.Close(c.fd) // also leaves the epoll set
		c.fd = -1
	}
	c.state = csDown
}

// reconnect replaces a connection at once after a Connection: close.
func (l *loop) reconnect(c *econn, now time.Time) {
	l.closeConn(c)
	if l.r.running(now) {
		l.connect(c, now)
	}
}

func (l *loop) send(c *econn, now time.Time) {
	c.since, c.woff, c.n, c.p = now, 0, 0, parser{}
	c.state = csWaiting
	l.write(c)
}

func (l *loop) write(c *econn) {
	req := l.r.tg.request
	for c.woff < len(req) {
		n, err := l.sysWrite(c.fd, req[c.woff:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if c.state != csWriting {
				c.state = csWriting
				ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP, Fd: c.idx}
				syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, c.fd, &ev)
			}
			return
		case err != nil:
			l.failed(c, kWrite, l.opError("write", os.NewSyscallError("write", err)), time.Now())
			return
		}
		c.woff += n
	}
	if c.state == csWriting {
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP, Fd: c.idx}
		syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_MOD, c.fd, &ev)
	}
	c.state = csWaiting
}

func (l *loop) read(c *econn) {
	m, err := l.sysRead(c.fd, c.buf[c.n:])
	if err == syscall.EAGAIN || err == syscall.EINTR {
		return // level-triggered: the event comes again
	}
	now := time.Now()
	if err != nil {
		l.failed(c, kRead, l.opError("read", os.NewSyscallError("read", err)), now)
		return
	}
	if m == 0 {
		done, err := c.p.eof(c.n)
		if !done {
			l.failed(c, kRead, l.opError("read", err), now)
			return
		}
		l.complete(c, now, false)
		return
	}
	c.n += m
	used, done, err := c.p.feed(c.buf[:c.n])
	if err == nil {
		c.n = copy(c.buf, c.buf[used:c.n])
		if done && c.n > 0 {
			err = errExtraData
		}
	}
	if err != nil {
		l.failed(c, kRead, l.opError("read", err), now)
		return
	}
	if done {
		l.complete(c, now, c.p.keep)
	}
}

// complete counts a response and sends the next request.
func (l *loop) complete(c *econn, now time.Time, keep bool) {
	l.done(c.p.status, now.Sub(c.since), now)
	c.backoff = 0
	switch {
	case !keep:
		l.reconnect(c, now)
	case l.r.running(now):
		l.send(c, now)
	default:
		c.state = csIdle
	}
}

func (l *loop) closeAll() {
	for _, c := range l.conns {
		l.closeConn(c)
	}
	syscall.Close(l.ep)
}

// epollWaitRaw is epoll_wait as a raw system call, for Config.Dedicated:
// the runtime does not see the loop leave, and its P stays with it, as a wrk
// thread keeps its CPU. Through syscall.EpollWait, every wait hands the P
// back and takes it again, and with every P in such waits the runtime's
// sysmon retakes Ps and starts spinning threads to run them: on two CPUs
// that cost a third more CPU per request, and the server a tenth of its
// throughput. The price: the other goroutines of the process run only when
// a loop yields (every checkEvery, in run) or is preempted.
func epollWaitRaw(ep int, events []syscall.EpollEvent, msec int) (int, error) {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// sysRead and sysWrite are read and write on a loop's non-blocking socket.
// In Dedicated mode they are raw system calls, as epoll_wait is there (see
// epollWaitRaw): a non-blocking socket never blocks and the loop keeps its
// P anyway, so the runtime's entersyscall and exitsyscall around each call
// would be cost for nothing.
func (l *loop) sysRead(fd int, b []byte) (int, error) {
	if !l.r.dedicated {
		return syscall.Read(fd, b)
	}
	return rawIO(syscall.SYS_READ, fd, b)
}

func (l *loop) sysWrite(fd int, b []byte) (int, error) {
	if !l.r.dedicated {
		return syscall.Write(fd, b)
	}
	return rawIO(syscall.SYS_WRITE, fd, b)
}

// rawIO is read or write (trap) of b on fd as a raw system call.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(p), uintptr(len(b)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
