// Package child runs a workload server in a child process: the current
// executable re-executed in a hidden mode with GOMAXPROCS=N and, on Linux
// where the machine has at least N CPUs, its CPU affinity restricted to N
// CPUs. The load generator in the parent then never shares a Go runtime
// with the server it measures, and profiles are pulled from the child's
// /debug/pprof endpoints, the same path a user takes against their own
// server.
//
// # Parent side
//
//	p, err := child.Start(ctx, child.Builtin(), child.Spec{Workload: "json", Variant: "global-lock", Cores: 4})
//	if err != nil { ... }
//	defer p.Stop()
//	// load p.URL + "/json"; capture from p.DebugURL
//
// # Child side
//
// A program that starts children calls MaybeRun(table) first thing in main
// (and a test package that starts children calls it first thing in
// TestMain): in a child it serves the workload and exits; otherwise it
// returns at once.
//
// The child serves the workload on 127.0.0.1:0 and, on a second loopback
// port, a private mux with net/http/pprof's handlers under /debug/pprof/,
// fgprof's under /debug/fgprof, and a JSON object at /debug/vars (pid,
// gomaxprocs, num_cpu, cpus, go_version, workload, variant and the profile
// rates). When both listen it prints one line on standard output:
//
//	PROFDIFF_CHILD_READY <workload-url> <debug-url> gomaxprocs=N cpus=LIST
//
// (the first three fields are fixed; key=value fields may be added). It
// stops gracefully on SIGTERM or SIGINT, or when its standard input (a
// pipe from the parent) reaches EOF, which happens when the parent dies.
// It catches those signals from before the ready line until it exits, so
// a signal that arrives while it shuts down, or one sent the moment it is
// ready, lets its workload close and log its summary.
//
// # Profile rates
//
// The child enables the mutex and block profiles, which are off by default
// in Go: runtime.SetMutexProfileFraction(DefaultMutexFraction) and
// runtime.SetBlockProfileRate(DefaultBlockRate); Spec overrides them. See
// those constants for the reasoning, and workloads/README.md for the
// measured overhead.
//
// # Workloads
//
// What a program's children can serve is a Table, workload names to serve
// functions, that the program builds in one place and hands to both sides:
// MaybeRun(table) in the child, Start(ctx, table, spec) in the parent,
// which checks the name, variant and arguments against it before starting
// anything. Builtin is profdiff's table: the JSON server (package
// workloads/jsonserver) as "json" and the Wasm plugin host (package
// workloads/wasmhost) as "wasm"; neither package imports child, which
// keeps the dependency one-way. There is no registry to add to at init
// time: a program with more workloads passes a bigger table.
//
// # Reaping
//
// Children are always reaped: Stop sends SIGTERM, waits a bounded time,
// then SIGKILL, and always waits for the exit. Cancelling Start's context
// stops the child the same way. Kill skips the grace, for a child that
// stopped answering. A child that ended on its own, before any of those,
// is told apart by Exited, which says how (exit status or signal). On Linux the child is started with
// Pdeathsig=SIGKILL, so a parent killed outright (SIGKILL, crash) takes the
// child with it; the standard-input pipe is a second guard on every system.
package child

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Spec says what the child serves and how.
type Spec struct {
	// Workload is a name in the Table given to Start ("json").
	Workload string
	// Variant is passed to the workload's serve function ("baseline",
	// "global-lock", "sharded" for json).
	Variant string
	// Cores is the child's GOMAXPROCS and, on Linux where at least that
	// many CPUs are available, the number of CPUs it is pinned to (the
	// first Cores CPUs of the parent's affinity mask). 0 leaves GOMAXPROCS
	// to the runtime's default and the affinity alone.
	Cores int
	// Args are handed to the workload's serve function (Params.Args).
	Args []string

	// StartTimeout bounds the wait for the readiness line (0: 15 s).
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL
	// (0: 5 s).
	StopTimeout time.Duration
	// Log receives the child's standard error and any standard output
	// besides the readiness line (nil: discarded; the last 4 KiB of
	// standard error are kept for error messages either way).
	Log io.Writer
	// MutexFraction and BlockRate override DefaultMutexFraction and
	// DefaultBlockRate; 0 keeps the default, a negative value turns that
	// profile off.
	MutexFraction int
	BlockRate     int
}

// Default profile rates set in the child. Their cost is below what runs
// on a 2-CPU machine resolve (run-to-run spread about ±10%); both profiles
// at rate 1 cost about a tenth more CPU per request. The measurements are
// in workloads/README.md (The server as a child process).
const (
	// DefaultMutexFraction: on average 1 in 10 contention events is
	// recorded (runtime.SetMutexProfileFraction(10)). A recorded event
	// captures a stack in the unlocker after the lock is released, so hold
	// times do not change; the delay reported is scaled back up by the
	// fraction, and one second of the contended global-lock variant at
	// GOMAXPROCS 2 still yields hundreds of milliseconds of delay.
	DefaultMutexFraction = 10
	// DefaultBlockRate: blocking events of 10 µs or longer are all
	// recorded, shorter ones with probability duration/10 µs
	// (runtime.SetBlockProfileRate(10000), in nanoseconds). Rate 1 would
	// capture a stack on every channel handoff (two per global-lock
	// request); the waits that matter here, tens of µs to ms under
	// contention, are all kept at 10 µs.
	DefaultBlockRate = 10000
)

// Process is a running child.
type Process struct {
	// URL is the workload's base URL, http://127.0.0.1:PORT.
	URL string
	// DebugURL is the base URL of the child's debug mux: /debug/pprof/,
	// /debug/fgprof and /debug/vars.
	DebugURL string
	// Pid is the child's process id.
	Pid int
	// GOMAXPROCS is the child's runtime.GOMAXPROCS(0), as it reported it.
	GOMAXPROCS int
	// CPUs lists the CPUs the child is pinned to; nil when it is not
	// pinned (not Linux, too few CPUs, or Cores 0).
	CPUs []int

	cmd     *exec.Cmd
	stdin   io.Closer
	stderr  *tailBuffer
	done    chan struct{}
	waitErr error
	stopTO  time.Duration

	stopOnce sync.Once
	stopErr  error
	stopped  atomic.Bool // Stop, Kill (or context cancellation) ended the child
	killed   atomic.Bool // by Kill's SIGKILL
}

const (
	envChild   = "PROFDIFF_CHILD" // the JSON-encoded childSpec
	readyToken = "PROFDIFF_CHILD_READY"
)

// childSpec is what the parent hands the child in PROFDIFF_CHILD.
type childSpec struct {
	Workload      string   `json:"workload"`
	Variant       string   `json:"variant"`
	Cores         int      `json:"cores"`
	Args          []string `json:"args,omitempty"`
	MutexFraction int      `json:"mutex_fraction"`
	BlockRate     int      `json:"block_rate"`
	WatchStdin    bool     `json:"watch_stdin"`
}

// Start runs spec's workload, which must be in table, in a child process
// and returns once it is ready to serve (or has failed, or StartTimeout
// has passed; the child is then stopped). The executable must call
// MaybeRun with the same table first thing in main (or TestMain).
// Cancelling ctx later stops the child as Stop does. The caller must call
// Stop (or cancel ctx and wait on Done).
func Start(ctx context.Context, table Table, spec Spec) (*Process, error) {
	cmd, err := command(table, spec)
	if err != nil {
		return nil, err
	}
	p, ready, err := launch(cmd, spec)
	if err != nil {
		return nil, err
	}
	if err := p.awaitReady(ctx, ready, spec.StartTimeout); err != nil {
		return nil, err
	}
	go func() {
		select {
		case <-ctx.Done():
			p.Stop()
		case <-p.done:
		}
	}()
	return p, nil
}

// command checks spec against table, in the parent where a mistake is
// cheap to report, and builds the child's command: this executable with
// the spec in its environment.
func command(table Table, spec Spec) (*exec.Cmd, error) {
	if os.Getenv(envChild) != "" {
		return nil, errors.New("child: a child process cannot start children")
	}
	if spec.Cores < 0 {
		return nil, fmt.Errorf("child: Cores must be 0 or positive, not %d", spec.Cores)
	}
	serve, err := table.lookup(spec.Workload)
	if err != nil {
		return nil, fmt.Errorf("child: %v", err)
	}
	// Fail here, not in the child, for a bad variant or arguments.
	if h, err := serve(Params{Variant: spec.Variant, Args: spec.Args, Log: io.Discard}); err != nil {
		return nil, fmt.Errorf("child: %v", err)
	} else if c, ok := h.(io.Closer); ok {
		c.Close()
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("child: finding the executable: %v", err)
	}
	enc, err := json.Marshal(childSpec{
		Workload: spec.Workload, Variant: spec.Variant, Cores: spec.Cores, Args: spec.Args,
		MutexFraction: rate(spec.MutexFraction, DefaultMutexFraction),
		BlockRate:     rate(spec.BlockRate, DefaultBlockRate),
		WatchStdin:    true,
	})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(filterEnv(os.Environ(), "GOMAXPROCS", envChild), envChild+"="+string(enc))
	if spec.Cores > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(spec.Cores))
	}
	cmd.SysProcAttr = sysProcAttr()
	// A child holding stderr open past its exit (it has no children of its
	// own, but be safe) must not hang Wait.
	cmd.WaitDelay = 2 * time.Second
	return cmd, nil
}

// launch starts cmd with its pipes, a goroutine that reaps it and one that
// reads its standard output: the readiness line goes to the returned
// channel, every other line to the log.
func launch(cmd *exec.Cmd, spec Spec) (*Process, <-chan string, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	// Standard output through our own pipe, so that reading it never races
	// with Wait closing it.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout = outW
	logw := spec.Log
	if logw == nil {
		logw = io.Discard
	}
	tail := &tailBuffer{w: logw, max: 4096}
	cmd.Stderr = tail
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, fmt.Errorf("child: starting %s: %v", cmd.Path, err)
	}
	outW.Close()

	p := &Process{
		Pid:    cmd.Process.Pid,
		cmd:    cmd,
		stdin:  stdin,
		stderr: tail,
		done:   make(chan struct{}),
		stopTO: spec.StopTimeout,
	}
	if p.stopTO <= 0 {
		p.stopTO = 5 * time.Second
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	ready := make(chan string, 1)
	go func() {
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent && strings.HasPrefix(line, readyToken+" ") {
				ready <- line
				sent = true
				continue
			}
			tail.passthrough(line + "\n")
		}
	}()
	return p, ready, nil
}

// awaitReady waits for the readiness line, at most timeout (0: 15 s); on
// every failure the child is stopped and reaped before it returns.
func (p *Process) awaitReady(ctx context.Context, ready <-chan string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case line := <-ready:
		if err := p.parseReady(line); err != nil {
			p.Stop()
			return err
		}
		return nil
	case <-p.done:
		return fmt.Errorf("child: exited before it was ready (%v)%s", p.waitErr, p.stderrTail(true))
	case <-timer.C:
		p.Stop()
		return fmt.Errorf("child: not ready after %v%s", timeout, p.stderrTail(false))
	case <-ctx.Done():
		p.Stop()
		return ctx.Err()
	}
}

func rate(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

func filterEnv(env []string, drop ...string) []string {
	out := env[:0:0]
next:
	for _, kv := range env {
		for _, d := range drop {
			if strings.HasPrefix(kv, d+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

// parseReady reads "PROFDIFF_CHILD_READY URL DEBUGURL k=v ...".
func (p *Process) parseReady(line string) error {
	f := strings.Fields(line)
	if len(f) < 3 || !strings.HasPrefix(f[1], "http://") || !strings.HasPrefix(f[2], "http://") {
		return fmt.Errorf("child: malformed readiness line %q", line)
	}
	p.URL, p.DebugURL = f[1], f[2]
	for _, kv := range f[3:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "gomaxprocs":
			p.GOMAXPROCS, _ = strconv.Atoi(v)
		case "cpus":
			p.CPUs = parseCPUList(v)
		}
	}
	return nil
}

// parseCPUList reads "0,1,2"; "-" (not pinned) and junk give nil.
func parseCPUList(s string) []int {
	var cpus []int
	for _, c := range strings.Split(s, ",") {
		n, err := strconv.Atoi(c)
		if err != nil {
			return nil
		}
		cpus = append(cpus, n)
	}
	return cpus
}

func formatCPUList(cpus []int) string {
	if len(cpus) == 0 {
		return "-"
	}
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// Done is closed once the child has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Stop ends the child: SIGTERM (a graceful shutdown), then SIGKILL if it
// has not exited within Spec.StopTimeout, and waits for it in every case.
// It returns nil when the child exited cleanly or was ended by Stop's
// signal, and an error (with the end of its standard error) when it
// crashed or had to be killed. Calling Stop again returns the same result.
func (p *Process) Stop() error {
	p.stopOnce.Do(func() {
		if p.endedFirst() {
			return
		}
		p.stopped.Store(true)
		_ = terminate(p.cmd.Process)
		p.stdin.Close()
		t := time.NewTimer(p.stopTO)
		defer t.Stop()
		select {
		case <-p.done:
			p.stopErr = p.exitError()
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.done
			p.stopErr = fmt.Errorf("child %d: did not exit within %v of SIGTERM; killed%s", p.Pid, p.stopTO, p.stderrTail(false))
		}
	})
	return p.stopErr
}

// endedFirst tells, for Stop and Kill, whether the child has exited
// already, and then sets their result.
func (p *Process) endedFirst() bool {
	select {
	case <-p.done:
		p.stopErr = p.exitError()
		return true
	default:
		return false
	}
}

// exitError interprets the exit after Done: a clean exit, or death by the
// SIGTERM that Stop sent, is no error.
func (p *Process) exitError() error {
	if p.waitErr == nil {
		return nil
	}
	if p.stopped.Load() && (p.killed.Load() || killedByTerm(p.cmd.ProcessState)) {
		return nil
	}
	return fmt.Errorf("child %d: %v%s", p.Pid, p.waitErr, p.stderrTail(true))
}

// Kill ends the child at once with SIGKILL, without the graceful stop, and
// waits for it: for a child that stopped answering, which a SIGTERM may not
// end (a stopped or wedged process). It returns nil when the child was
// ended by Kill, and Stop's error when it had exited before; Stop and Kill
// afterwards return the same.
func (p *Process) Kill() error {
	p.stopOnce.Do(func() {
		if p.endedFirst() {
			return
		}
		p.stopped.Store(true)
		p.killed.Store(true)
		_ = p.cmd.Process.Kill()
		p.stdin.Close()
		<-p.done
		p.stopErr = p.exitError()
	})
	return p.stopErr
}

// Exited tells how the child ended when it ended on its own: it exited,
// crashed or was killed by someone else before Stop or Kill (or the
// cancellation of Start's context) ended it. It is nil while the child
// runs and when Stop or Kill ended it. Wait on Done first to know it has
// ended.
func (p *Process) Exited() *ExitError {
	select {
	case <-p.done:
	default:
		return nil
	}
	if p.stopped.Load() {
		return nil
	}
	return &ExitError{Pid: p.Pid, State: p.cmd.ProcessState, Stderr: strings.TrimSpace(p.stderr.String())}
}

// ExitError describes a child that ended on its own (Process.Exited).
type ExitError struct {
	Pid int
	// State is its exit status.
	State *os.ProcessState
	// Stderr is the end of its standard error (the last 4 KiB at most).
	Stderr string
}

// Reason is how it ended, in a few words: "exited (status 2)",
// "killed by signal 9 (killed)".
func (e *ExitError) Reason() string {
	if e.State == nil {
		return "exited"
	}
	if ws, ok := e.State.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return fmt.Sprintf("killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("exited (status %d)", e.State.ExitCode())
}

// Error is "child PID " and the Reason.
func (e *ExitError) Error() string { return fmt.Sprintf("child %d %s", e.Pid, e.Reason()) }

// CPUTime returns the child's user+system CPU time so far: from
// /proc/PID/stat while it runs (Linux only), from its rusage once it has
// exited and been reaped.
func (p *Process) CPUTime() (time.Duration, error) {
	select {
	case <-p.done:
		st := p.cmd.ProcessState
		return st.UserTime() + st.SystemTime(), nil
	default:
	}
	return procCPUTime(p.Pid)
}

// stderrTail formats the last lines of the child's standard error for an
// error message.
func (p *Process) stderrTail(hint bool) string {
	s := strings.TrimSpace(p.stderr.String())
	msg := ""
	if s != "" {
		msg = "; its stderr ends:\n" + s
	}
	if hint && !strings.Contains(s, childLogPrefix) {
		// serveChild logs every failure of its own with this prefix, so
		// a child that exited without one never got there.
		msg += "\n(the child never reached child.MaybeRun: a program that starts children must call it first thing in main, a test package in TestMain)"
	}
	return msg
}

// tailBuffer copies writes to w and keeps the last max bytes.
type tailBuffer struct {
	mu  sync.Mutex
	w   io.Writer
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.w.Write(b)
	return len(b), nil
}

// passthrough copies s to w (under the same lock as Write, so a Log
// writer that is not safe for concurrent use gets one writer at a time)
// without keeping it.
func (t *tailBuffer) passthrough(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	io.WriteString(t.w, s)
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	// Start at a line boundary when the tail was cut.
	if len(b) >= t.max {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// killedByTerm reports whether the process died of SIGTERM.
func killedByTerm(st *os.ProcessState) bool {
	if st == nil {
		return false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM
}
